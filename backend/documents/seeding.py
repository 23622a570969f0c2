"""First published versions of the catalog's templates and of the PDF style, from the default
content shipped in `defaults/`.

Run by `vitrine migrate` after the migrations (so `vitrine dev` and a PaaS release phase seed
without a manual step). Idempotent, once per template ever: the version counter row is created
with the seed, and its `INSERT ... ON CONFLICT DO NOTHING` decides who seeds. An admin who later
deletes version 1 never sees it come back.

A release that changes a shipped default (a legal mention added to the invoice) publishes it as
the next version where the current version is an earlier shipped default, which no admin edited
(its content key is a `default-` one); a template an admin published stays as it is.
"""

from __future__ import annotations

import hashlib

from backend import clock
from backend.db import database, transaction
from backend.documents.catalog import PDF_STYLE_KEY, default_style, load_catalog
from backend.documents.models import Kind, Status, TemplateVersion
from backend.documents.versions import (
    CONTENT_CONTEXT,
    current_version,
    journal,
    next_version_number,
    snapshots,
    write_content,
)
from storage import Storage


def default_contents() -> list[tuple[str, Kind, str]]:
    defaults = [(key, Kind.MARKDOWN, entry.default_content()) for key, entry in load_catalog().items()]
    return [*defaults, (PDF_STYLE_KEY, Kind.PDF_CSS, default_style())]


def seed_default_versions(storage: Storage) -> list[str]:
    """Publish version 1 of every template never published before, and the shipped default as the
    next version of a template still at an earlier shipped default; returns the keys seeded."""
    seeded = []
    for template_key, kind, content in default_contents():
        digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
        content_key = f"{template_key}/default-{digest[:16]}.{'md' if kind == Kind.MARKDOWN else 'css'}"
        if not storage.exists(CONTENT_CONTEXT, content_key):
            write_content(storage, template_key, kind, content, key=content_key)  # blob before row
        with transaction():
            claimed = database.execute_sql(
                "INSERT INTO document_template_counter (template_key, kind, last_version) VALUES (%s, %s, 1)"
                " ON CONFLICT (template_key, kind) DO NOTHING RETURNING last_version",
                (template_key, kind.value),
            ).fetchone()
            if claimed is None:
                if upgrade_untouched_default(template_key, kind, content_key, digest):
                    seeded.append(template_key)
                continue
            now = clock.now()
            TemplateVersion.create(
                template_key=template_key, kind=kind, status=Status.PUBLISHED, version=1,
                content_key=content_key, content_sha256=digest, published_at=now, created_at=now,
                updated_at=now, **snapshots(template_key, kind),
            )
        seeded.append(template_key)
    return seeded


def upgrade_untouched_default(template_key: str, kind: Kind, content_key: str, digest: str) -> bool:
    """Publish the shipped default (`content_key`, its blob written) as the next version when the
    current version is an earlier shipped default; True when it did. Inside the caller's
    transaction: the counter row is locked first, so two releases running at once publish once."""
    database.execute_sql("SELECT 1 FROM document_template_counter WHERE template_key = %s AND kind = %s FOR UPDATE",
                         (template_key, kind.value))
    current = current_version(template_key, kind)
    if current is None or current.content_sha256 == digest or not is_shipped_default(template_key, current):
        return False
    number = next_version_number(template_key, kind)
    now = clock.now()
    TemplateVersion.create(
        template_key=template_key, kind=kind, status=Status.PUBLISHED, version=number, content_key=content_key,
        content_sha256=digest, published_at=now, created_at=now, updated_at=now, **snapshots(template_key, kind),
    )
    journal("document_template.version_published", None, template_key, kind, number,
            "shipped default updated (the version before it was the earlier shipped default)")
    return True


def is_shipped_default(template_key: str, row: TemplateVersion) -> bool:
    return row.content_key.startswith(f"{template_key}/default-")
