"""Document fixtures: storage of the session, seeded default versions, PDF text extraction."""

from __future__ import annotations

import io
import uuid

import pytest
from pypdf import PdfReader

from storage import build_storage

HEADER_MARK = "EN-TETE DISCRET DE TEST"


def pdf_pages(pdf: bytes) -> list[str]:
    """Text of each page, whitespace collapsed (justified lines and French thin spaces)."""
    reader = PdfReader(io.BytesIO(pdf))
    return [" ".join(page.extract_text().replace("\u202f", " ").replace("\xa0", " ").split())
            for page in reader.pages]


def flat(text: str) -> str:
    return " ".join(text.replace("\u202f", " ").replace("\xa0", " ").split())


@pytest.fixture
def storage(config):
    return build_storage(config)


@pytest.fixture
def seeded(storage):
    """Version 1 of every template and of the PDF style, as `vitrine migrate` seeds them."""
    from backend.documents.seeding import seed_default_versions

    return seed_default_versions(storage)


@pytest.fixture
def actor_id():
    """A user id as the identity area makes them (the journal keeps it without a foreign key)."""
    return str(uuid.uuid4())
