"""`render_document`: the current published version with the published style; failures are
logged with the template key and never leave a stored file."""

from __future__ import annotations

import pytest

from backend.documents import rendering, versions
from backend.documents.catalog import PDF_STYLE_KEY, load_catalog
from backend.documents.models import Kind
from backend.errors import NotFound, ValidationError
from tests.documents.conftest import pdf_pages

KEY = "delegation_proof"


def test_render_document_uses_the_latest_published_version_and_style(storage, config, seeded, actor_id):
    context = load_catalog()[KEY].sample_context()
    versions.save_draft(template_key=KEY, kind=Kind.MARKDOWN, actor_user_id=actor_id, storage=storage,
                        content="# Délégation révisée\n\nPour {{ organizationName }}.\n\n{{signer|signature|150|50}}\n")
    versions.publish(template_key=KEY, kind=Kind.MARKDOWN, actor_user_id=actor_id)
    versions.save_draft(template_key=KEY, kind=Kind.MARKDOWN, actor_user_id=actor_id, storage=storage,
                        content="# Brouillon non publié\n")
    versions.save_draft(template_key=PDF_STYLE_KEY, kind=Kind.PDF_CSS, actor_user_id=actor_id, storage=storage,
                        content="main::after { content: 'STYLE-PUBLIE'; }")
    versions.publish(template_key=PDF_STYLE_KEY, kind=Kind.PDF_CSS, actor_user_id=actor_id)

    (page,) = pdf_pages(rendering.render_document(KEY, context, storage=storage, config=config))
    assert "Délégation révisée" in page and "Fromagerie des Alpes SAS" in page
    assert "{{signer|signature|150|50}}" in page and "STYLE-PUBLIE" in page and "1 / 1" in page
    assert "Brouillon non publié" not in page


def test_render_document_without_a_published_version_is_not_found(storage, config):
    with pytest.raises(NotFound):
        rendering.render_document(KEY, {}, storage=storage, config=config)


def test_rendering_errors_are_logged_with_the_template_key_and_store_nothing(storage, config, seeded, log_lines):
    with pytest.raises(ValidationError, match="organizationName"):
        rendering.render_document(KEY, {}, storage=storage, config=config)
    assert not storage.exists("test-documents", "out/doc.pdf")
    (line,) = [line for line in log_lines() if line["scope"] == "documents.render"]
    assert (line["level"], line["templateKey"], line["version"], line["code"]) == ("warn", KEY, 1, "VALIDATION_ERROR")


def test_unexpected_failures_are_logged_as_errors(storage, config, seeded, log_lines, monkeypatch):
    def broken(html):
        raise RuntimeError("weasyprint exploded")

    monkeypatch.setattr(rendering, "html_to_pdf", broken)
    with pytest.raises(RuntimeError):
        rendering.render_document(KEY, load_catalog()[KEY].sample_context(), storage=storage, config=config)
    assert not storage.exists("test-documents", "out/doc.pdf")
    (line,) = [line for line in log_lines() if line["scope"] == "documents.render"]
    assert (line["level"], line["templateKey"]) == ("error", KEY)
    assert "weasyprint exploded" in line["error"]
