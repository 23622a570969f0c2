"""Drafts and published versions of document templates (markdown) and of the PDF style (pdf_css).

Business rules of Specification A: one draft per (templateKey, kind) (a partial unique index,
written by an upsert); published versions are immutable (publishing turns the draft row into
version N and nothing updates a published row afterwards); the last remaining published version
cannot be deleted (409 `TEMPLATE_LAST_ACTIVE_VERSION`); every deletion needs a reason and is
journaled in the security audit log with actor, key, version and reason.

Content lives in object storage (context `document-templates`), written before the row that
points at it, under a fresh key per save: a key's bytes never change, so reads are cached.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from backend import clock
from backend.audit import record_security_event
from backend.db import database, on_commit, transaction
from backend.documents import sandbox
from backend.documents.catalog import PDF_STYLE_KEY, PDF_STYLE_TITLE, catalog_entry, default_style, load_catalog
from backend.documents.formatting import prepare_variables
from backend.documents.models import Kind, Status, TemplateVersion
from backend.errors import NotFound, TemplateLastActiveVersion, ValidationError
from storage import Storage

CONTENT_CONTEXT = "document-templates"
MAX_CONTENT_CHARS = 200_000
MAX_REASON_CHARS = 1000
_EXTENSIONS = {Kind.MARKDOWN: "md", Kind.PDF_CSS: "css"}


def snapshots(template_key: str, kind: Kind) -> dict:
    """The catalog metadata frozen on a version: title, catalog version, variables."""
    if kind == Kind.PDF_CSS:
        if template_key != PDF_STYLE_KEY:
            raise NotFound(f"unknown PDF style {template_key!r}")
        return {"title_snapshot": PDF_STYLE_TITLE, "catalog_version": None, "variables_snapshot": None}
    entry = catalog_entry(template_key)
    return {"title_snapshot": entry.title, "catalog_version": entry.catalog_version,
            "variables_snapshot": entry.variables_snapshot()}


def check_content(template_key: str, kind: Kind, content: object) -> str:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("content must be a non-empty string", fields={"content": ["must not be empty"]})
    if len(content) > MAX_CONTENT_CHARS:
        raise ValidationError(f"content exceeds {MAX_CONTENT_CHARS} characters",
                              fields={"content": [f"at most {MAX_CONTENT_CHARS} characters"]})
    if kind == Kind.MARKDOWN:
        entry = catalog_entry(template_key)
        # Rendered once with the catalog's examples: a template over the rendering limits is
        # refused when saved, before any document needs it.
        sandbox.check_template(content, declared=[v.name for v in entry.variables],
                               sample=prepare_variables(entry.variables, entry.sample_context()))
    elif "</style" in content.lower():
        # The style is embedded in a <style> element; closing it would let CSS inject markup.
        raise ValidationError("the PDF style must not contain </style>",
                              fields={"content": ["</style> is not allowed"]})
    return content


def write_content(storage: Storage, template_key: str, kind: Kind, content: str, *, key: str | None = None):
    """Store `content` (before any row points at it); returns (content_key, sha256)."""
    data = content.encode("utf-8")
    content_key = key or f"{template_key}/{uuid.uuid4().hex}.{_EXTENSIONS[kind]}"
    media = "text/markdown; charset=utf-8" if kind == Kind.MARKDOWN else "text/css; charset=utf-8"
    storage.put_bytes(CONTENT_CONTEXT, content_key, data, media)
    return content_key, hashlib.sha256(data).hexdigest()


def read_content(storage: Storage, row: TemplateVersion) -> str:
    return _read(storage, row.content_key)


@lru_cache(maxsize=256)
def _read(storage: Storage, content_key: str) -> str:
    # Safe to cache: a content key is written once and never rewritten with other bytes.
    return storage.read_bytes(CONTENT_CONTEXT, content_key).decode("utf-8")


# The draft is locked and re-checked before the upsert: `previous_key` is then the content the
# update replaces, never the content of a version a concurrent publish just took from the draft.
_UPSERT_DRAFT = """
WITH previous AS (
    SELECT content_key FROM document_template_version
    WHERE template_key = %(key)s AND kind = %(kind)s AND status = 'draft'
    FOR UPDATE
)
INSERT INTO document_template_version
    (id, template_key, kind, status, content_key, content_sha256, title_snapshot, catalog_version,
     variables_snapshot, created_by_user_id, updated_by_user_id, created_at, updated_at)
VALUES (%(id)s, %(key)s, %(kind)s, 'draft', %(content_key)s, %(sha)s, %(title)s, %(catalog)s,
        %(variables)s, %(actor)s, %(actor)s, %(now)s, %(now)s)
ON CONFLICT (template_key, kind) WHERE status = 'draft' DO UPDATE SET
    content_key = EXCLUDED.content_key, content_sha256 = EXCLUDED.content_sha256,
    title_snapshot = EXCLUDED.title_snapshot, catalog_version = EXCLUDED.catalog_version,
    variables_snapshot = EXCLUDED.variables_snapshot, updated_by_user_id = EXCLUDED.updated_by_user_id,
    updated_at = EXCLUDED.updated_at
RETURNING id, (xmax = 0) AS created, (SELECT content_key FROM previous) AS previous_key
"""  # xmax = 0: PostgreSQL inserted the row rather than updating it


def save_draft(*, template_key: str, kind: Kind, content: str, actor_user_id: str | None,
               storage: Storage) -> tuple[TemplateVersion, bool]:
    """Create or update the draft of (template_key, kind); returns (draft, created)."""
    snap = snapshots(template_key, kind)
    check_content(template_key, kind, content)
    content_key, sha = write_content(storage, template_key, kind, content)
    params = {
        "id": str(uuid.uuid4()), "key": template_key, "kind": kind.value, "content_key": content_key,
        "sha": sha, "title": snap["title_snapshot"], "catalog": snap["catalog_version"],
        "variables": None if snap["variables_snapshot"] is None else json.dumps(snap["variables_snapshot"]),
        "actor": actor_user_id, "now": clock.now(),
    }
    with transaction():
        draft_id, created, previous_key = database.execute_sql(_UPSERT_DRAFT, params).fetchone()
        if not created and previous_key:
            on_commit(lambda: storage.delete(CONTENT_CONTEXT, previous_key))  # the replaced draft's blob
    return TemplateVersion.get_by_id(draft_id), created


def get_draft(template_key: str, kind: Kind) -> TemplateVersion | None:
    return TemplateVersion.get_or_none(
        TemplateVersion.template_key == template_key, TemplateVersion.kind == kind,
        TemplateVersion.status == Status.DRAFT,
    )


def delete_draft(*, template_key: str, kind: Kind, actor_user_id: str | None, storage: Storage,
                 reason: str | None = None) -> TemplateVersion:
    snapshots(template_key, kind)
    with transaction():
        draft = (TemplateVersion.select()
                 .where(TemplateVersion.template_key == template_key, TemplateVersion.kind == kind,
                        TemplateVersion.status == Status.DRAFT)
                 .for_update().first())
        if draft is None:
            raise NotFound(f"{template_key} has no draft")
        draft.delete_instance()
        journal("document_template.draft_deleted", actor_user_id, template_key, kind, None, reason)
        on_commit(lambda: storage.delete(CONTENT_CONTEXT, draft.content_key))
    return draft


def publish(*, template_key: str, kind: Kind, actor_user_id: str | None) -> TemplateVersion:
    """Turn the draft into the next version number; 404 when there is no draft.

    The draft row is locked first: a concurrent publish of the same template waits, then finds
    no draft. The number comes from the counter row, so it is never reused after a deletion.
    """
    snap = snapshots(template_key, kind)
    with transaction():
        draft = (TemplateVersion.select()
                 .where(TemplateVersion.template_key == template_key, TemplateVersion.kind == kind,
                        TemplateVersion.status == Status.DRAFT)
                 .for_update().first())
        if draft is None:
            raise NotFound(f"{template_key} has no draft to publish")
        number = next_version_number(template_key, kind)
        now = clock.now()
        TemplateVersion.update(
            status=Status.PUBLISHED, version=number, published_at=now, updated_at=now,
            updated_by_user_id=actor_user_id, **snap,
        ).where(TemplateVersion.id == draft.id).execute()
        journal("document_template.version_published", actor_user_id, template_key, kind, number, None)
    return TemplateVersion.get_by_id(draft.id)


def next_version_number(template_key: str, kind: Kind) -> int:
    """Allocate the next number (locks the counter row until the transaction ends)."""
    cursor = database.execute_sql(
        "INSERT INTO document_template_counter (template_key, kind, last_version) VALUES (%s, %s, 1)"
        " ON CONFLICT (template_key, kind) DO UPDATE"
        " SET last_version = document_template_counter.last_version + 1 RETURNING last_version",
        (template_key, kind.value),
    )
    return cursor.fetchone()[0]


def delete_version(*, template_key: str, kind: Kind, version: int, reason: str | None,
                   actor_user_id: str | None) -> TemplateVersion:
    """Remove a published version, never the last one; the reason is journaled."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required to delete a version", fields={"reason": ["is required"]})
    if len(reason) > MAX_REASON_CHARS:
        raise ValidationError("reason is too long", fields={"reason": [f"at most {MAX_REASON_CHARS} characters"]})
    snapshots(template_key, kind)
    with transaction():
        # Lock every published version of the template: two concurrent deletions cannot both
        # see "another version remains" and leave none.
        published = list(_published(template_key, kind).for_update())
        target = next((row for row in published if row.version == version), None)
        if target is None:
            raise NotFound(f"{template_key} has no published version {version}")
        if len(published) == 1:
            raise TemplateLastActiveVersion(
                f"version {version} is the last active version of {template_key}",
                templateKey=template_key, version=version,
            )
        target.delete_instance()
        journal("document_template.version_deleted", actor_user_id, template_key, kind, version, reason)
    return target


def _published(template_key: str, kind: Kind):
    return (TemplateVersion.select()
            .where(TemplateVersion.template_key == template_key, TemplateVersion.kind == kind,
                   TemplateVersion.status == Status.PUBLISHED)
            .order_by(TemplateVersion.version.desc()))


def current_version(template_key: str, kind: Kind) -> TemplateVersion | None:
    """The highest published version (what documents are rendered with), or None."""
    return _published(template_key, kind).first()


def require_current_version(template_key: str, kind: Kind) -> TemplateVersion:
    row = current_version(template_key, kind)
    if row is None:
        raise NotFound(f"{template_key} has no published version")
    return row


def get_version(template_key: str, kind: Kind, version: int) -> TemplateVersion:
    row = _published(template_key, kind).where(TemplateVersion.version == version).first()
    if row is None:
        raise NotFound(f"{template_key} has no published version {version}")
    return row


def history(template_key: str, kind: Kind) -> tuple[TemplateVersion | None, list[TemplateVersion]]:
    """(draft or None, published versions newest first)."""
    snapshots(template_key, kind)
    return get_draft(template_key, kind), list(_published(template_key, kind))


def summaries() -> dict[tuple[str, str], dict]:
    """Per (templateKey, kind): current version, its publication date and the draft, in one query."""
    rows = database.execute_sql(
        "SELECT template_key, kind, max(version), max(published_at),"
        " max(updated_at) FILTER (WHERE status = 'draft'), bool_or(status = 'draft')"
        " FROM document_template_version GROUP BY template_key, kind"
    ).fetchall()
    return {
        (key, kind): {"currentVersion": version, "lastPublishedAt": published_at,
                      "draftUpdatedAt": draft_updated_at, "hasDraft": bool(has_draft)}
        for key, kind, version, published_at, draft_updated_at, has_draft in rows
    }


def journal(event: str, actor_user_id: str | None, template_key: str, kind: Kind, version: int | None,
             reason: str | None) -> None:
    record_security_event(
        event, actor_user_id=actor_user_id, target_type="document_template", target_id=template_key,
        details={"templateKey": template_key, "kind": kind.value, "version": version, "reason": reason},
    )


@dataclass(frozen=True)
class VersionView:
    """A version with its content, read from storage: what the admin answers show."""

    row: TemplateVersion
    content: str


def with_content(storage: Storage, row: TemplateVersion) -> VersionView:
    return VersionView(row, read_content(storage, row))


def history_with_content(storage: Storage, template_key: str, kind: Kind) -> tuple[VersionView | None,
                                                                                   list[VersionView]]:
    """`history` with each version's content."""
    draft, published = history(template_key, kind)
    return (with_content(storage, draft) if draft else None), [with_content(storage, row) for row in published]


@dataclass(frozen=True)
class TemplateSummary:
    template_key: str
    kind: str
    title: str
    category: str | None
    current_version: int | None
    last_published_at: datetime | None
    has_draft: bool
    draft_updated_at: datetime | None

    @property
    def status(self) -> str | None:
        """`published` once a version is published, else `draft` when only a draft exists."""
        if self.current_version:
            return "published"
        return "draft" if self.has_draft else None


def template_summaries() -> tuple[list[TemplateSummary], TemplateSummary]:
    """Every catalog template's summary, and the PDF style's: one query."""
    state = summaries()

    def summary(key: str, kind: Kind, title: str, category: str | None) -> TemplateSummary:
        found = state.get((key, kind.value), {})
        return TemplateSummary(key, kind.value, title, category, found.get("currentVersion"),
                               found.get("lastPublishedAt"), found.get("hasDraft", False), found.get("draftUpdatedAt"))

    templates = [summary(key, Kind.MARKDOWN, entry.title, entry.category) for key, entry in load_catalog().items()]
    return templates, summary(PDF_STYLE_KEY, Kind.PDF_CSS, PDF_STYLE_TITLE, None)


@dataclass(frozen=True)
class StyleSource:
    version: int | None
    published_at: datetime | None
    content: str


def style_source(storage: Storage) -> StyleSource:
    """The CSS documents are rendered with: the published style, or the built-in default."""
    row = current_version(PDF_STYLE_KEY, Kind.PDF_CSS)
    if row is None:
        return StyleSource(None, None, default_style())
    return StyleSource(row.version, row.published_at, read_content(storage, row))

