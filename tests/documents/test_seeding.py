"""Seeding the shipped defaults: once per template, and a release's new default published over an
earlier shipped default no admin edited, never over an admin's own version."""

from __future__ import annotations

from unittest import mock

from backend.documents import seeding, versions
from backend.documents.models import Kind

KEY = "invoice"


def _release_changes_the_default(extra: str):
    shipped = seeding.default_contents()

    def contents():
        return [(key, kind, content + extra if key == KEY else content) for key, kind, content in shipped]

    return mock.patch.object(seeding, "default_contents", contents)


def test_seeding_is_idempotent(storage, seeded):
    assert KEY in seeded
    assert seeding.seed_default_versions(storage) == []
    assert versions.current_version(KEY, Kind.MARKDOWN).version == 1


def test_a_new_shipped_default_replaces_an_untouched_one_once(storage, seeded):
    with _release_changes_the_default("\n\nMention ajoutée par la version suivante.\n"):
        assert seeding.seed_default_versions(storage) == [KEY]
        assert seeding.seed_default_versions(storage) == []  # published once
    current = versions.current_version(KEY, Kind.MARKDOWN)
    assert current.version == 2
    assert versions.read_content(storage, current).endswith("Mention ajoutée par la version suivante.\n")
    assert [row.version for row in versions.history(KEY, Kind.MARKDOWN)[1]] == [2, 1]  # version 1 kept


def test_an_admins_own_version_is_never_replaced(storage, seeded, actor_id):
    versions.save_draft(template_key=KEY, kind=Kind.MARKDOWN, storage=storage, actor_user_id=actor_id,
                        content=versions.read_content(storage, versions.current_version(KEY, Kind.MARKDOWN))
                        + "\n\nMention de l'administrateur.\n")
    own = versions.publish(template_key=KEY, kind=Kind.MARKDOWN, actor_user_id=actor_id)
    with _release_changes_the_default("\n\nMention ajoutée par la version suivante.\n"):
        assert seeding.seed_default_versions(storage) == []
    assert versions.current_version(KEY, Kind.MARKDOWN).id == own.id
