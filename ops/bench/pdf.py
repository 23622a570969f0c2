"""`vitrine bench pdf`: warm rendering of the framework contract through `render_document`
(published version read, sandboxed Jinja2, markdown-it, frame, weasyprint), against weasyprint
rendering the same final HTML directly: the ratio is the cost of everything around weasyprint.

Which font-subsetting path weasyprint ran on is printed: HarfBuzz when `libharfbuzz-subset0` is
installed, else the fontTools fallback (about three times slower; see the README and `Aptfile`).
"""

from __future__ import annotations

import io
import time

from weasyprint import HTML

from ops.bench.load import percentile
from ops.bench.report import SHARED_CORES_NOTE, Figure, Result

NAME = "pdf"
DESCRIPTION = "warm render_document of framework_contract (p50, p99); reference: weasyprint on the same final HTML"
KEY = "framework_contract"


def run(stack, quick: bool) -> Result:
    from pypdf import PdfReader

    from backend.db import database
    from backend.documents import rendering, versions
    from backend.documents.catalog import catalog_entry
    from backend.documents.seeding import seed_default_versions
    from backend.runtime import current_runtime

    renders, warmup = (10, 2) if quick else (50, 3)
    runtime = current_runtime()
    entry = catalog_entry(KEY)
    context = entry.sample_context()
    with database.connection_context():
        seed_default_versions(runtime.storage)
        current = versions.require_current_version(KEY, versions.Kind.MARKDOWN)
        style = versions.require_current_version(rendering.PDF_STYLE_KEY, versions.Kind.PDF_CSS)
        final_html = rendering.render_html(
            entry, versions.read_content(runtime.storage, current), versions.read_content(runtime.storage, style),
            context, runtime.config, title=current.title_snapshot,
        )

        def ours() -> bytes:
            return rendering.render_document(KEY, context, storage=runtime.storage, config=runtime.config)

        def reference() -> bytes:
            return HTML(string=final_html).write_pdf()

        for _ in range(warmup):
            ours(), reference()
        timings: dict[str, list[float]] = {"vitrine": [], "reference": []}
        pages = {}
        for _ in range(renders):
            # Alternating spreads the machine's other load over both alike.
            for name, render in (("vitrine", ours), ("reference", reference)):
                began = time.perf_counter()
                pdf = render()
                timings[name].append(1000 * (time.perf_counter() - began))
                pages[name] = len(PdfReader(io.BytesIO(pdf)).pages)

    mine, ref = (tuple(sorted(timings[name])) for name in ("vitrine", "reference"))
    subsetting = rendering.font_subsetting()
    return Result(
        title=f"render_document({KEY!r}) warm, {renders} renders each",
        reference="weasyprint.HTML(string=<the same final HTML>).write_pdf(), in the same process",
        settings=[
            f"font subsetting: {subsetting}"
            + ("" if subsetting == "harfbuzz" else " (libharfbuzz-subset0 absent: fontTools fallback, ~3x slower)"),
            f"{warmup} warm-up render(s) each, then alternating, one process, published version and style",
        ],
        figures=[
            Figure("render p50 (ms)", percentile(mine, 0.50), percentile(ref, 0.50)),
            Figure("render p99 (ms)", percentile(mine, 0.99), percentile(ref, 0.99)),
            Figure("pages", pages["vitrine"], pages["reference"], summary=False),
        ],
        checks=[f"pages: {pages['vitrine']} vitrine, {pages['reference']} reference (expected equal)"],
        notes=[SHARED_CORES_NOTE],
        ok=pages["vitrine"] == pages["reference"],
    )
