"""Printer routes of print batches (spec B): list, detail, aggregated ZIP, two-level order form,
and the status advance of every order of a batch.

Role `printer` and an active `printer:*` organization; a batch is resolved by code in one query
filtered on that organization and on status `sent` (a draft or another printer's batch is 404).
"""

from __future__ import annotations

from api.access import PRINTER, Route
from api.operations import Answer, operation
from api.requests import acting_organization
from api.responses import send_archive, send_pdf
from backend.printing import batch_advance, batch_views
from backend.printing.archive import stream_archive
from backend.printing.order_form import render_batch_order_form
from schemas.printing.batches import AdvanceCountersOut, BatchDetailOut, BatchListOut, BatchStatusIn, StatusRunOut

BASE = "/api/printer/print-batches"


class PrinterBatches:
    @operation(
        "Sent batches of the printer organization, most recently updated first, not paginated",
        description=(
            "`ordersCount` and `totalPanels` (sum of every line's quantity) are aggregated in the "
            "database."
        ),
        tags=("printer",),
        answer=BatchListOut,
        answer_description="`{batches}`",
    )
    def on_get(self, req, resp) -> dict:
        return {"batches": batch_views.printer_batches(acting_organization(req, "printer"))}


class PrinterBatch:
    def __init__(self, deps) -> None:
        self.storage, self.config = deps.storage, deps.config

    def _view(self, req, code: str):
        return batch_views.printer_batch(batch_code=code, printer_organization_id=acting_organization(req, "printer"))

    @operation(
        "A batch with its distinct visuals, aggregated lines (as in the ZIP) and manifest",
        description="The manifest has one entry per order, cancelled ones included.",
        tags=("printer",),
        answer=BatchDetailOut,
        answer_description="the batch",
    )
    def on_get(self, req, resp, code: str) -> batch_views.BatchView:
        return self._view(req, code)

    @operation(
        "One file per distinct visual, named with the batch total (`_qte<N>`), by position, streamed",
        description="404 when the batch has no file.",
        tags=("printer",),
        produces="application/zip",
        answer_description="the archive",
    )
    def on_get_download(self, req, resp, code: str) -> None:
        printer = acting_organization(req, "printer")
        files = batch_views.printer_batch_files(batch_code=code, printer_organization_id=printer)
        send_archive(resp, stream_archive(self.storage, files, filename=f"{code}.zip"))

    @operation(
        "The batch's order form (aggregated recap, then the delivery manifest)",
        tags=("printer",),
        produces="application/pdf",
        answer_description="the PDF",
    )
    def on_get_form(self, req, resp, code: str) -> None:
        view = self._view(req, code)
        send_pdf(resp, render_batch_order_form(view, storage=self.storage, config=self.config),
                 f"bon-de-commande-{code}.pdf")

    @operation(
        "`{nextStatus}` applied to every order, in groups; answers `{advanced, skipped, failed}`",
        description=(
            "Each order goes through the single-order service, as messages in groups of "
            "ADVANCE_STATUS_CONCURRENCY (10), each group settled before the next and none started "
            "after a group with a failure. `skipped`: the order could not take that step "
            "(VALIDATION_ERROR: another step, cancelled); `failed`: a real anomaly. Never a global "
            "error for a mixed batch. The request waits up to BATCH_ADVANCE_WAIT_SECONDS (20) for the "
            "run; past it, 202 with the run (poll GET .../status-runs/{runId})."
        ),
        tags=("printer",),
        body=BatchStatusIn,
        answer=AdvanceCountersOut,
        answer_description="the counters",
        other_answers={202: (StatusRunOut, "the run, still going")},
    )
    def on_patch_status(self, req, resp, code: str, body: dict) -> Answer:
        started = batch_advance.start_advance(
            batch_code=code, printer_organization_id=acting_organization(req, "printer"),
            next_status=body["nextStatus"],
            actor_user_id=req.context.principal.user_id, group_size=self.config.advance_status_concurrency,
        )
        state = batch_advance.wait_for_run(started.id, timeout_seconds=self.config.batch_advance_wait_seconds)
        return Answer(state, 200 if state.done else 202)

    @operation(
        "The counters of a batch status advance, and whether it is done",
        tags=("printer",),
        answer=StatusRunOut,
        answer_description="the run",
    )
    def on_get_run(self, req, resp, code: str, run_id: str) -> batch_advance.RunState:
        return batch_advance.run_state(
            batch_code=code, printer_organization_id=acting_organization(req, "printer"), run_id=run_id)


def routes(deps) -> list[Route]:
    item = PrinterBatch(deps)
    return [
        Route(BASE, PrinterBatches(), PRINTER),
        Route(f"{BASE}/{{code}}", item, PRINTER),
        Route(f"{BASE}/{{code}}/download", item, PRINTER, suffix="download"),
        Route(f"{BASE}/{{code}}/bon-de-commande", item, PRINTER, suffix="form"),
        Route(f"{BASE}/{{code}}/status", item, PRINTER, suffix="status"),
        Route(f"{BASE}/{{code}}/status-runs/{{run_id}}", item, PRINTER, suffix="run"),
    ]
