"""Drafts, publication, deletions and their journal: the four business rules of Specification A."""

from __future__ import annotations

import pytest

from backend.audit import SecurityEvent
from backend.documents import versions
from backend.documents.catalog import PDF_STYLE_KEY, load_catalog
from backend.documents.models import Kind, Status, TemplateVersion
from backend.documents.seeding import seed_default_versions
from backend.errors import NotFound, TemplateLastActiveVersion, ValidationError

KEY = "cgu_acceptance"
MD = Kind.MARKDOWN


def draft(storage, actor_id, content="# CGU\n\nAcceptées par {{ organizationName }}.\n", key=KEY, kind=MD):
    return versions.save_draft(template_key=key, kind=kind, content=content, actor_user_id=actor_id,
                               storage=storage)


def journal(event: str) -> list[dict]:
    rows = SecurityEvent.select().where(SecurityEvent.event == event).order_by(SecurityEvent.id)
    return [{"actor": r.actor_user_id, "target": r.target_id, **r.details} for r in rows]


def test_seeding_publishes_version_one_of_every_template_once(storage, seeded):
    assert set(seeded) == set(load_catalog()) | {PDF_STYLE_KEY}
    first = versions.current_version(KEY, MD)
    assert (first.version, first.status, first.created_by_user_id) == (1, Status.PUBLISHED, None)
    assert versions.read_content(storage, first) == load_catalog()[KEY].default_content()
    assert first.title_snapshot == load_catalog()[KEY].title
    assert first.catalog_version == load_catalog()[KEY].catalog_version
    assert [v["name"] for v in first.variables_snapshot] == [v.name for v in load_catalog()[KEY].variables]
    assert versions.current_version(PDF_STYLE_KEY, Kind.PDF_CSS).version == 1
    assert seed_default_versions(storage) == []
    assert TemplateVersion.select().count() == len(seeded)


def test_one_draft_per_key_and_kind_created_then_updated(storage, actor_id):
    first, created = draft(storage, actor_id)
    second, created_again = draft(storage, "another-user", content="# CGU v2\n")
    assert (created, created_again) == (True, False)
    assert second.id == first.id
    assert (second.created_by_user_id, second.updated_by_user_id) == (actor_id, "another-user")
    assert versions.read_content(storage, second) == "# CGU v2\n"
    assert TemplateVersion.select().where(TemplateVersion.status == Status.DRAFT).count() == 1
    style, created_style = draft(storage, actor_id, content="h1 { color: red; }", key=PDF_STYLE_KEY, kind=Kind.PDF_CSS)
    assert created_style and style.kind == Kind.PDF_CSS


def test_draft_content_is_checked(storage, actor_id):
    with pytest.raises(ValidationError, match="undeclared variables: secretKey"):
        draft(storage, actor_id, content="Bonjour {{ secretKey }}")
    with pytest.raises(ValidationError, match="syntax error line 2"):
        draft(storage, actor_id, content="ligne\n{% if %}")
    with pytest.raises(ValidationError):
        draft(storage, actor_id, content="   ")
    with pytest.raises(ValidationError, match="</style>"):
        draft(storage, actor_id, content="h1 {}</style><img src=x>", key=PDF_STYLE_KEY, kind=Kind.PDF_CSS)
    with pytest.raises(NotFound):
        draft(storage, actor_id, key="unknown_template")
    with pytest.raises(NotFound):
        draft(storage, actor_id, content="h1 {}", key=KEY, kind=Kind.PDF_CSS)


def test_publish_numbers_versions_and_keeps_snapshots(storage, seeded, actor_id):
    draft(storage, actor_id)
    published = versions.publish(template_key=KEY, kind=MD, actor_user_id=actor_id)
    assert (published.version, published.status, published.updated_by_user_id) == (2, Status.PUBLISHED, actor_id)
    assert published.published_at is not None and published.title_snapshot == load_catalog()[KEY].title
    assert versions.get_draft(KEY, MD) is None
    assert versions.current_version(KEY, MD).id == published.id
    with pytest.raises(NotFound, match="no draft"):
        versions.publish(template_key=KEY, kind=MD, actor_user_id=actor_id)
    assert journal("document_template.version_published")[-1]["version"] == 2


def test_published_versions_are_immutable(storage, seeded, actor_id):
    v1 = versions.current_version(KEY, MD)
    before = versions.read_content(storage, v1)
    new_draft, created = draft(storage, actor_id, content="# Nouvelle version\n")
    assert created and new_draft.id != v1.id
    again = TemplateVersion.get_by_id(v1.id)
    assert (again.status, again.version, again.content_key) == (Status.PUBLISHED, 1, v1.content_key)
    assert versions.read_content(storage, again) == before


def test_delete_draft_is_journaled(storage, actor_id):
    with pytest.raises(NotFound):
        versions.delete_draft(template_key=KEY, kind=MD, actor_user_id=actor_id, storage=storage)
    draft(storage, actor_id)
    versions.delete_draft(template_key=KEY, kind=MD, actor_user_id=actor_id, storage=storage,
                          reason="brouillon obsolète")
    assert versions.get_draft(KEY, MD) is None
    assert journal("document_template.draft_deleted") == [
        {"actor": actor_id, "target": KEY, "templateKey": KEY, "kind": "markdown", "version": None,
         "reason": "brouillon obsolète"}
    ]


def test_deleting_a_version_requires_a_reason(storage, seeded, actor_id):
    draft(storage, actor_id)
    versions.publish(template_key=KEY, kind=MD, actor_user_id=actor_id)
    for reason in (None, "", "   "):
        with pytest.raises(ValidationError) as caught:
            versions.delete_version(template_key=KEY, kind=MD, version=1, reason=reason, actor_user_id=actor_id)
        assert caught.value.code == "VALIDATION_ERROR" and "reason" in caught.value.details["fields"]
    assert versions.get_version(KEY, MD, 1)


def test_the_last_active_version_cannot_be_deleted(storage, seeded, actor_id):
    with pytest.raises(TemplateLastActiveVersion) as caught:
        versions.delete_version(template_key=KEY, kind=MD, version=1, reason="erreur", actor_user_id=actor_id)
    assert caught.value.code == "TEMPLATE_LAST_ACTIVE_VERSION"
    assert versions.current_version(KEY, MD).version == 1
    assert journal("document_template.version_deleted") == []


def test_deletion_is_journaled_and_numbers_are_never_reused(storage, seeded, actor_id):
    draft(storage, actor_id)
    versions.publish(template_key=KEY, kind=MD, actor_user_id=actor_id)
    versions.delete_version(template_key=KEY, kind=MD, version=2, reason="  clause erronée ", actor_user_id=actor_id)
    assert versions.current_version(KEY, MD).version == 1  # the previous version is current again
    assert journal("document_template.version_deleted") == [
        {"actor": actor_id, "target": KEY, "templateKey": KEY, "kind": "markdown", "version": 2,
         "reason": "clause erronée"}
    ]
    with pytest.raises(NotFound):
        versions.delete_version(template_key=KEY, kind=MD, version=2, reason="encore", actor_user_id=actor_id)
    draft(storage, actor_id)
    assert versions.publish(template_key=KEY, kind=MD, actor_user_id=actor_id).version == 3
    versions.delete_version(template_key=KEY, kind=MD, version=1, reason="remplacée", actor_user_id=actor_id)
    assert seed_default_versions(storage) == []  # a deleted seed never comes back
    assert [row.version for row in versions.history(KEY, MD)[1]] == [3]


def test_history_lists_draft_and_published_versions_newest_first(storage, seeded, actor_id):
    for _ in range(2):
        draft(storage, actor_id)
        versions.publish(template_key=KEY, kind=MD, actor_user_id=actor_id)
    draft(storage, actor_id, content="# brouillon\n")
    current_draft, published = versions.history(KEY, MD)
    assert [row.version for row in published] == [3, 2, 1]
    assert current_draft.status == Status.DRAFT
    summary = versions.summaries()[(KEY, "markdown")]
    assert (summary["currentVersion"], summary["hasDraft"]) == (3, True)


def test_vitrine_migrate_seeds_the_catalog_without_a_manual_step(capsys):
    from ops.cli import main

    assert main(["migrate"]) == 0
    assert "document templates seeded: cgu_acceptance, delegation_proof" in capsys.readouterr().out
    assert main(["migrate"]) == 0
    assert "document templates seeded" not in capsys.readouterr().out
    assert versions.current_version("invoice", MD).version == 1
