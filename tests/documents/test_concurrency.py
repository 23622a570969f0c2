"""Concurrent publishes of one template, on two real PostgreSQL connections (threads)."""

from __future__ import annotations

import threading

import pytest

from backend.db import database
from backend.documents import versions
from backend.documents.models import Kind, TemplateVersion
from backend.errors import NotFound

KEY = "framework_contract"
ROUNDS = 4


def run_in_threads(target, count: int = 2) -> None:
    errors: list[BaseException] = []

    def guarded(index: int) -> None:
        try:
            with database.connection_context():
                target(index)
        except BaseException as exc:  # reported to the test below, never lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors


@pytest.mark.committed
def test_two_concurrent_publishes_never_produce_equal_version_numbers(storage, actor_id):
    barrier = threading.Barrier(2, timeout=20)
    outcomes: list[tuple[int, int | None]] = []

    def publisher(index: int) -> None:
        for round_ in range(ROUNDS):
            versions.save_draft(template_key=KEY, kind=Kind.MARKDOWN, content=f"# Version {index}-{round_}\n",
                                actor_user_id=actor_id, storage=storage)
            barrier.wait()  # both drafts saved (one row): both publish at once
            try:
                outcomes.append((round_, versions.publish(template_key=KEY, kind=Kind.MARKDOWN,
                                                          actor_user_id=actor_id).version))
            except NotFound:  # the other thread published the draft first
                outcomes.append((round_, None))
            barrier.wait()

    run_in_threads(publisher)
    numbers = [number for _, number in outcomes if number is not None]
    assert sorted(numbers) == list(range(1, ROUNDS + 1))  # one publication per round, distinct
    with database.connection_context():
        rows = TemplateVersion.select().where(TemplateVersion.template_key == KEY)
        assert sorted(row.version for row in rows) == list(range(1, ROUNDS + 1))


@pytest.mark.committed
def test_version_numbers_are_allocated_once_under_contention():
    barrier = threading.Barrier(2, timeout=20)
    numbers: list[int] = []

    def allocate(index: int) -> None:
        for _ in range(5):
            barrier.wait()
            with database.atomic():
                numbers.append(versions.next_version_number(KEY, Kind.MARKDOWN))

    run_in_threads(allocate)
    assert sorted(numbers) == list(range(1, 11))


def test_a_process_renders_one_pdf_at_a_time_whatever_its_threads(monkeypatch):
    """`rendering.html_to_pdf` holds a lock around weasyprint: renders of several threads follow
    each other (they would share one GIL anyway), and each gives the same bytes as alone."""
    from weasyprint import HTML

    from backend.documents.rendering import html_to_pdf

    write_pdf, inside, most = HTML.write_pdf, [0], [0]
    counter = threading.Lock()

    def counted(self, *args, **kwargs):
        with counter:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            return write_pdf(self, *args, **kwargs)
        finally:
            with counter:
                inside[0] -= 1

    monkeypatch.setattr(HTML, "write_pdf", counted)
    document = "<!doctype html><html><body><p>Facture</p></body></html>"
    alone = html_to_pdf(document, pdf_identifier=b"0" * 32)
    pdfs: list[bytes] = []
    threads = [threading.Thread(target=lambda: pdfs.append(html_to_pdf(document, pdf_identifier=b"0" * 32)))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1
    assert pdfs == [alone] * 3
