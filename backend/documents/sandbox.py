"""Admin-written template content, rendered in a locked-down Jinja2 sandbox.

Template content comes from the back-office, so it is untrusted: it runs in an immutable
sandbox (no attribute starting with `_`, no mutation of context values, no globals, bounded
`range`, `*` and `**`), every undefined name is an error, and every printed value is escaped for
markdown so a value can neither inject markup nor forge a signature anchor.

Signature anchors `{{<signer_key>|signature|<width>|<height>}}` look like Jinja expressions.
They are swapped for private-use placeholders before Jinja sees the content and put back by the
renderer once the HTML exists, so they reach the PDF text layer exactly as written.
"""

from __future__ import annotations

import re
from functools import lru_cache

from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError, meta
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from backend.documents import formatting
from backend.documents.catalog import FRAME_KEYS
from backend.errors import ValidationError

ANCHOR = re.compile(r"\{\{([a-z0-9_]+)\|signature\|(\d{1,4})\|(\d{1,4})\}\}")
# Private-use characters delimit anchor placeholders; they are removed from every value, so
# no value can ever produce one.
_OPEN, _CLOSE = "\ue000", "\ue001"
PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
MAX_SEQUENCE = 100_000
MAX_EXPONENT = 64


class _Sandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context, operator, left, right):
        # Refuse the arithmetic that would exhaust memory or CPU (`'a' * 10**9`, `9 ** 9 ** 9`).
        if operator == "**" and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
            raise SecurityError("exponent too large")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int) and len(seq) * times > MAX_SEQUENCE:
                    raise SecurityError("sequence repetition too large")
        return super().call_binop(context, operator, left, right)


def _finalize(value: object) -> str:
    """Every `{{ value }}`: French display, then markdown-escaped and defused."""
    text = _PRIVATE_USE.sub("", formatting.display(value))
    text = text.replace("{{", "{ {").replace("}}", "} }")  # never a signature anchor
    text = re.sub(r"\s*[\r\n]+\s*", " ", text)  # one value never opens a new markdown block
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def _build_environment() -> _Sandbox:
    env = _Sandbox(
        undefined=StrictUndefined,
        autoescape=False,  # the output is markdown, escaped by _finalize; markdown-it escapes HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    env.globals.clear()
    env.filters["euros"] = formatting.euros_filter
    env.filters["date_fr"] = formatting.date_filter
    return env


_ENV = _build_environment()


def protect_anchors(content: str) -> tuple[str, list[str]]:
    """The content with anchors swapped for placeholders, and the anchors in order."""
    anchors: list[str] = []

    def swap(match: re.Match) -> str:
        anchors.append(match.group(0))
        return f"{_OPEN}{len(anchors) - 1}{_CLOSE}"

    return ANCHOR.sub(swap, _PRIVATE_USE.sub("", content)), anchors


def restore_anchors(text: str, anchors: list[str], wrap=lambda anchor: anchor) -> str:
    return PLACEHOLDER.sub(lambda m: wrap(anchors[int(m.group(1))]), text)


@lru_cache(maxsize=128)
def _compile(source: str):
    try:
        return _ENV.from_string(source)
    except TemplateSyntaxError as exc:
        raise ValidationError(
            f"template syntax error line {exc.lineno}: {exc.message}", line=exc.lineno
        ) from None


def check_template(content: str, *, declared: list[str]) -> None:
    """Refuse content that does not parse or names a variable the catalog does not declare."""
    source, _ = protect_anchors(content)
    try:
        ast = _ENV.parse(source)
    except TemplateSyntaxError as exc:
        raise ValidationError(
            f"template syntax error line {exc.lineno}: {exc.message}", line=exc.lineno
        ) from None
    unknown = sorted(meta.find_undeclared_variables(ast) - set(declared) - set(FRAME_KEYS))
    if unknown:
        raise ValidationError(f"the template uses undeclared variables: {', '.join(unknown)}", unknown=unknown)


def render_markdown_source(content: str, variables: dict) -> tuple[str, list[str]]:
    """Substitute `variables` into `content` in the sandbox: (markdown with placeholders, anchors)."""
    source, anchors = protect_anchors(content)
    template = _compile(source)
    try:
        return template.render(variables), anchors
    except SecurityError as exc:
        raise ValidationError(f"the template attempted a forbidden operation: {exc}") from None
    except ValidationError:
        raise
    except TemplateError as exc:
        raise ValidationError(f"the template could not be rendered: {exc.message}") from None
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
        raise ValidationError(f"the template could not be rendered: {exc}") from None
