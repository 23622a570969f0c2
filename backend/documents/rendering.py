"""PDF rendering: published markdown version + context -> sandboxed Jinja2 -> markdown-it HTML
inside the common frame -> weasyprint PDF.

`render_document(templateKey, context)` is the one entry point later areas call (from actors):
it renders the current published version of the template with the current published PDF style.
Nothing here writes a file: a PDF exists only once it is complete in memory, so a caller storing
it in one `put_bytes` never leaves half a file behind.
"""

from __future__ import annotations

import html
import logging
import threading
from dataclasses import dataclass

from markdown_it import MarkdownIt

from backend.config import Config
from backend.documents import sandbox, versions
from backend.documents.catalog import PDF_STYLE_KEY, CatalogEntry, catalog_entry, default_style
from backend.documents.formatting import prepare_variables, type_problem
from backend.documents.sandbox import FRAME_KEYS
from backend.errors import DomainError, NotFound, ValidationError
from backend.logs import log_event
from storage import Storage

SCOPE = "documents.render"
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


class _NoLogFontToolsWarning(logging.Filter):
    # weasyprint warns once per font and per document when it subsets with fontTools; the path is
    # reported by `font_subsetting()` instead (`vitrine bench monthend` prints it).
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Using fontTools instead of HarfBuzz")


logging.getLogger("weasyprint").addFilter(_NoLogFontToolsWarning())

# One weasyprint render at a time in a process. A render is CPU-bound Python under the process's
# one GIL: two at once in two threads finish no sooner than one after the other, and interleaved
# (a GIL hand-over every few milliseconds) each costs more CPU than one after the other, as the
# worker rendering a month end's invoices shows (`vitrine bench monthend`, docs/performance.md).
# The threads' other work (queries, storage, HTTP, the template's sandbox) still runs beside it.
_RENDER_LOCK = threading.Lock()


def load_renderer() -> None:
    """Import weasyprint now rather than at the first document (`html_to_pdf`): for a worker,
    which renders, before it freezes what it holds after boot (`actors.broker.FrozenBootHeap`)."""
    import weasyprint  # noqa: F401


def font_subsetting() -> str:
    """`harfbuzz` when weasyprint subsets fonts with libharfbuzz-subset, else `fonttools` (slower)."""
    from weasyprint.text.ffi import harfbuzz, harfbuzz_subset

    return "harfbuzz" if harfbuzz_subset and harfbuzz.hb_version_atleast(4, 1, 0) else "fonttools"


@dataclass(frozen=True)
class Frame:
    """The common frame of every document: discreet header, footer with title and page / total."""

    title: str
    header_lines: tuple[str, ...]
    footer_line1: str | None
    footer_line2: str | None
    header_on_first_page: bool = False

    @classmethod
    def for_context(cls, title: str, context: dict, config: Config | None) -> Frame:
        """Frame settings from the context's frame keys, defaulting to the platform identity."""
        problems = {}
        for key, kind in (("headerLines", "array"), ("footerTextLine1", "string"),
                          ("footerTextLine2", "string"), ("headerOnFirstPage", "boolean")):
            if context.get(key) is not None and (problem := type_problem(kind, context[key])):
                problems[key] = [problem]
        if isinstance(context.get("headerLines"), list) and not all(
            isinstance(line, str) for line in context["headerLines"]
        ):
            problems["headerLines"] = ["must be an array of strings"]
        if problems:
            raise ValidationError("invalid frame settings", fields=problems)
        default_header, default_line1, default_line2 = _platform_identity(config)
        lines = context.get("headerLines")
        return cls(
            title=title,
            header_lines=tuple(lines) if lines is not None else default_header,
            footer_line1=context.get("footerTextLine1", default_line1),
            footer_line2=context.get("footerTextLine2", default_line2),
            header_on_first_page=bool(context.get("headerOnFirstPage", False)),
        )

    def css(self) -> str:
        first_page = "" if self.header_on_first_page else "@page :first { @top-left { content: none; } }\n"
        return (
            "@page {\n"
            "  @top-left { content: element(frameHeader); width: 100%; vertical-align: bottom; }\n"
            "  @bottom-left { content: element(frameFooter); width: 80%; vertical-align: top; }\n"
            '  @bottom-right { content: counter(page) " / " counter(pages); width: 20%;\n'
            "                  vertical-align: top; text-align: right; font-size: 7.5pt; color: #7a8290; }\n"
            "}\n" + first_page +
            ".frame-header { position: running(frameHeader); }\n"
            ".frame-footer { position: running(frameFooter); }\n"
            ".frame-footer div, .frame-header div { margin: 0; }\n"
        )

    def html(self) -> str:
        header = "".join(f"<div>{html.escape(line)}</div>" for line in self.header_lines)
        footer = f'<div class="frame-title">{html.escape(self.title)}</div>'
        footer += "".join(f"<div>{html.escape(line)}</div>" for line in (self.footer_line1, self.footer_line2) if line)
        return f'<div class="frame-header">{header}</div><div class="frame-footer">{footer}</div>'


def _platform_identity(config: Config | None) -> tuple[tuple[str, ...], str | None, str | None]:
    """Header and footer defaults from PLATFORM_LEGAL_*, readable when some are unset."""
    name = (config and config.platform_legal_company_name) or "Vitrine"
    parts = [name]
    if config and config.platform_legal_siret:
        parts.append(f"SIRET {config.platform_legal_siret}")
    if config and config.platform_legal_street and config.platform_legal_city:
        town = " ".join(p for p in (config.platform_legal_postal_code, config.platform_legal_city) if p)
        parts.append(f"{config.platform_legal_street}, {town}")
    line2 = config.platform_legal_email if config and config.platform_legal_email else None
    return (name,), " · ".join(parts), line2


def _anchor_html(anchor: str) -> str:
    match = sandbox.ANCHOR.fullmatch(anchor)
    width, height = match.group(2), match.group(3)
    # The anchor text stays in the text layer for the provider's parser; the box reserves the
    # space the signature field will take at its position.
    return f'<span class="signature-anchor" style="width: {width}px; height: {height}px">{anchor}</span>'


def render_html(entry: CatalogEntry, content: str, style_css: str, context: dict,
                config: Config | None = None, *, title: str | None = None) -> str:
    """The final HTML of a document: checked variables substituted, markdown converted, framed."""
    variables = prepare_variables(entry.variables, context)
    frame = Frame.for_context(title or entry.title, context, config)
    markdown, anchors = sandbox.render_markdown_source(content, {**_frame_variables(context), **variables})
    body = sandbox.restore_anchors(_MARKDOWN.render(markdown), anchors, _anchor_html)
    return (
        '<!doctype html><html lang="fr"><head><meta charset="utf-8">'
        f"<title>{html.escape(frame.title)}</title>"
        f"<style>{frame.css()}</style><style>{style_css}</style></head>"
        f'<body>{frame.html()}<main class="document">{body}</main></body></html>'
    )


def _frame_variables(context: dict) -> dict:
    # Templates may print the frame settings too (e.g. a header line in the body).
    return {key: context.get(key) for key in FRAME_KEYS}


def html_to_pdf(document_html: str, **pdf_options: object) -> bytes:
    """weasyprint, with every external fetch refused except data: URIs (admin content must not
    read local files or reach the network); `pdf_options` go to `write_pdf` (e.g. the invoice's
    `pdf_variant="pdf/a-3b"` and `pdf_identifier`)."""
    # Imported here: weasyprint takes most of a second to import, which web workers should not
    # pay at boot (health checks) but on their first render.
    from weasyprint import HTML
    from weasyprint.urls import URLFetcher

    fetcher = URLFetcher(allowed_protocols={"data"}, timeout=2)
    with _RENDER_LOCK:
        return HTML(string=document_html, url_fetcher=fetcher, base_url=None).write_pdf(**pdf_options)


def render_pdf(entry: CatalogEntry, content: str, style_css: str, context: dict, config: Config | None,
               *, version: int | None, title: str | None = None, pdf_options: dict | None = None) -> bytes:
    """HTML then PDF; failures are logged with the template key and version, then re-raised."""
    try:
        return html_to_pdf(render_html(entry, content, style_css, context, config, title=title), **(pdf_options or {}))
    except DomainError as exc:
        log_event(SCOPE, "document rendering refused", "warn", templateKey=entry.template_key,
                  version=version, code=exc.code, error=exc.message)
        raise
    except Exception as exc:
        log_event(SCOPE, "document rendering failed", "error", templateKey=entry.template_key,
                  version=version, error=f"{type(exc).__name__}: {exc}")
        raise


def render_document(template_key: str, context: dict, *, storage: Storage, config: Config | None,
                    pdf_options: dict | None = None, template_version: int | None = None,
                    style_version: int | None = None, title: str | None = None) -> bytes:
    """The PDF of the current published version of `template_key`, with the published style; or
    of the published versions given (`style_version` 0: the built-in default style), as a document
    frozen on them renders again (NotFound when one of them no longer exists). `title`, the
    footer's, is the version's title unless the caller names the document (one template serves
    several kinds of document, each with its own title)."""
    entry = catalog_entry(template_key)
    kind = versions.Kind.MARKDOWN
    row = (versions.require_current_version(template_key, kind) if template_version is None
           else versions.get_version(template_key, kind, template_version))
    style = _style_css(storage, draft=False) if style_version is None else _style_version_css(storage, style_version)
    return render_pdf(entry, versions.read_content(storage, row), style, context, config, version=row.version,
                      title=title or row.title_snapshot, pdf_options=pdf_options)


def render_preview(template_key: str, *, context: dict, version: int | None = None, style_draft: bool = False,
                   storage: Storage, config: Config | None) -> tuple[bytes, str]:
    """(PDF, label) of version `version`, else the draft, else the current version, with the
    catalog's examples standing in for every variable `context` leaves out."""
    entry = catalog_entry(template_key)
    kind = versions.Kind.MARKDOWN
    if version is not None:
        row = versions.get_version(template_key, kind, version)
    else:
        row = versions.get_draft(template_key, kind) or versions.require_current_version(template_key, kind)
    pdf = render_pdf(entry, versions.read_content(storage, row), _style_css(storage, draft=style_draft),
                     {**entry.sample_context(), **context}, config, version=row.version, title=row.title_snapshot)
    return pdf, f"v{row.version}" if row.version else "draft"


def _style_version_css(storage: Storage, version: int) -> str:
    """Published version `version` of the PDF style; 0 is the built-in default."""
    if version == 0:
        return default_style()
    return versions.read_content(storage, versions.get_version(PDF_STYLE_KEY, versions.Kind.PDF_CSS, version))


def _style_css(storage: Storage, *, draft: bool) -> str:
    """The published PDF style (the built-in default before any is published), or its draft."""
    if draft:
        row = versions.get_draft(PDF_STYLE_KEY, versions.Kind.PDF_CSS)
        if row is None:
            raise NotFound("the PDF style has no draft")
    else:
        row = versions.current_version(PDF_STYLE_KEY, versions.Kind.PDF_CSS)
    return versions.read_content(storage, row) if row else default_style()

