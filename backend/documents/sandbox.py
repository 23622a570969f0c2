"""Admin-written template content, rendered in a locked-down Jinja2 sandbox.

Template content comes from the back-office, so it is untrusted: it runs in an immutable
sandbox (no attribute starting with `_`, no mutation of context values, no globals), every
undefined name is an error, and every printed value is escaped for markdown so a value can
neither inject markup nor forge a signature anchor.

Jinja's sandbox keeps templates away from Python objects but does not bound what they build
(`'x'.ljust(10**9)`, `s|join(s)`, a macro doubling a string at each call). So every way a
template builds text is bounded by `MAX_TEXT` characters, checked before the text is built:

- filters and methods are whitelists (`SAFE_FILTERS`, `SAFE_METHODS`): no padding, `format`,
  `tojson`..., and their integer arguments and arguments' sizes are bounded;
- `join`, `replace`, `~`, every buffer and the rendered document itself are joined through
  `environment.concat`, which stops at `MAX_TEXT`; `+`, `*`, `%`, `**` check their operands;
- macros, call, filter and set blocks, template blocks and recursive loops are refused (they
  allow recursion, hence exponential growth).

Nothing is evaluated while compiling (no constant folding), so the web process, which compiles
to check the syntax, builds no text. Those checks keep a template from building huge text; they
cannot bound CPU time (loops over the
data) nor catch every allocation. So templates never run in the web or actor process:
`render_markdown_source` hands them to a worker of `render_pool`, a child process with an
address-space limit, a CPU-time limit and a wall-clock timeout. An over-limit template is a
VALIDATION_ERROR with `details.reason = "template_limit"`, when previewed and already when saved
(`check_template` renders the catalog's sample data).

Signature anchors `{{<signer_key>|signature|<width>|<height>}}` look like Jinja expressions.
They are swapped for private-use placeholders before Jinja sees the content and put back by the
renderer once the HTML exists, so they reach the PDF text layer exactly as written.
"""

from __future__ import annotations

import functools
import re
from datetime import date
from functools import lru_cache

from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError, meta, nodes
from jinja2.compiler import CodeGenerator, optimizeconst
from jinja2.filters import make_attrgetter
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.utils import pass_environment

from backend.documents import formatting
from backend.documents.render_pool import LIMIT_REASON, default_pool
from backend.errors import DomainError, ValidationError

# Context keys the common frame reads (header and footer), available to every template besides
# the variables its catalog entry declares.
FRAME_KEYS = ("headerLines", "footerTextLine1", "footerTextLine2", "headerOnFirstPage")

ANCHOR = re.compile(r"\{\{([a-z0-9_]+)\|signature\|(\d{1,4})\|(\d{1,4})\}\}")
# Private-use characters delimit anchor placeholders; they are removed from every value, so
# no value can ever produce one.
_OPEN, _CLOSE = "\ue000", "\ue001"
PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
MAX_SEQUENCE = 100_000  # items or characters of one `*` repetition
MAX_EXPONENT = 64
MAX_TEXT = 1_000_000  # characters of any text a template builds, the rendered document included
MAX_INT_BITS = 1024
MAX_PRINTF_DIGITS = 3  # printf widths and precisions up to 999
# How deep a template may nest (blocks, brackets, and the operators, attributes and filters of one
# expression, each a level of its syntax tree): far above what a document needs, far below where
# parsing, compiling or rendering it would exhaust Python's stack.
MAX_NESTING = 40
_OPENING_BLOCKS = frozenset({"if", "for", "with", "filter", "macro", "call", "block", "autoescape", "trans"})
_OPERATOR_SYMBOLS = frozenset({"+", "-", "*", "/", "//", "%", "**", ".", "|", "~", "==", "!=", "<", "<=", ">",
                               ">="})
_OPERATOR_NAMES = frozenset({"not", "and", "or", "in", "is", "if", "else"})


class TemplateTooDeep(DomainError):
    """422: a template nests deeper than `MAX_NESTING` (`details.depth`, `details.maxDepth`)."""

    code = "TEMPLATE_TOO_DEEP"

SAFE_FILTERS = frozenset({
    "abs", "attr", "batch", "capitalize", "count", "d", "default", "dictsort", "first", "float", "groupby",
    "int", "items", "join", "last", "length", "list", "lower", "map", "max", "min", "reject", "rejectattr",
    "replace", "reverse", "round", "select", "selectattr", "slice", "sort", "sum", "title", "trim", "truncate",
    "unique", "upper", "wordcount",
})
SAFE_METHODS = frozenset({
    # str (none of them pads, repeats or formats)
    "capitalize", "casefold", "count", "endswith", "find", "index", "isalnum", "isalpha", "isdecimal",
    "isdigit", "islower", "isnumeric", "isspace", "istitle", "isupper", "lower", "lstrip", "partition",
    "removeprefix", "removesuffix", "rfind", "rindex", "rpartition", "rsplit", "rstrip", "split", "splitlines",
    "startswith", "strip", "swapcase", "title", "upper",
    # dict, and the loop helpers
    "get", "items", "keys", "values", "cycle", "changed",
})
_REFUSED_NODES = {
    nodes.Macro: "macros", nodes.CallBlock: "call blocks", nodes.FilterBlock: "filter blocks",
    nodes.AssignBlock: "set blocks", nodes.Block: "blocks", nodes.Extends: "extends",
    nodes.Include: "include", nodes.Import: "import", nodes.FromImport: "import",
}


def _too_large(what: str) -> SecurityError:
    return SecurityError(f"{what} exceeds the limit of {MAX_TEXT} characters")


def text_size(value: object, budget: int = MAX_TEXT) -> int:
    """About how many characters `value` prints as; stops counting once past `budget`."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return value.bit_length() // 3 + 2
    if isinstance(value, float | date):
        return 32
    if isinstance(value, dict):
        value = [item for pair in value.items() for item in pair]
    if isinstance(value, list | tuple | set | frozenset):
        size = 0
        for item in value:
            size += text_size(item, budget - size) + 2
            if size > budget:
                break
        return size
    return 64  # the loop, Undefined... print short


def _check_size(value: object, what: str = "a value") -> object:
    if text_size(value) > MAX_TEXT:
        raise _too_large(what)
    return value


def _check_arguments(values, *, bound_numbers: bool = False) -> None:
    """Arguments whose text would exceed the limit are refused (a filter or method may turn them
    into text); with `bound_numbers`, so are integers above it (widths, counts, fills)."""
    for value in values:
        if bound_numbers and isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_TEXT:
            raise SecurityError(f"an argument above {MAX_TEXT} is not allowed")
        if isinstance(value, str | list | tuple | set | frozenset | dict):
            _check_size(value, "an argument")


def _text(value: object) -> str:
    """`str(value)`, refused before a container's text could exceed the limit."""
    return value if isinstance(value, str) else str(_check_size(value))


def bounded_concat(parts) -> str:
    """`"".join`, stopping before the text exceeds `MAX_TEXT` (Jinja joins buffers and the whole
    document with `environment.concat`)."""
    joined, size = [], 0
    for part in parts:
        part = _text(part)
        size += len(part)
        if size > MAX_TEXT:
            raise _too_large("the text")
        joined.append(part)
    return "".join(joined)


@pass_environment
def _join(environment, value, d="", attribute=None) -> str:
    if attribute is not None:
        value = map(make_attrgetter(environment, attribute), value)
    separator = _text(d)

    def interleaved():
        for index, item in enumerate(value):
            if index:
                yield separator
            yield item

    return bounded_concat(interleaved())


def _replace(value, old, new, count=None) -> str:
    text, old, new = _text(value), _text(old), _text(new)
    found = len(text) + 1 if old == "" else text.count(old)
    if count is not None:
        found = min(found, max(count, 0))
    if len(text) + found * (len(new) - len(old)) > MAX_TEXT:
        raise _too_large("the replaced text")
    return text.replace(old, new, -1 if count is None else count)


def _bounded(function):
    # The filtered value comes after the environment or context Jinja passes to marked filters;
    # only the arguments after it are widths and counts.
    value_index = 1 if hasattr(function, "jinja_pass_arg") else 0

    @functools.wraps(function)  # keeps Jinja's pass_environment / pass_context marks
    def bounded(*args, **kwargs):
        _check_arguments(args[value_index:value_index + 1])
        _check_arguments((*args[value_index + 1:], *kwargs.values()), bound_numbers=True)
        return _check_size(function(*args, **kwargs), "a filter result")

    return bounded


class _NothingEvaluated:
    """Code generation that evaluates nothing: Jinja writes a printed expression of literals out as
    its value (`{{ 'aaa'|replace('a', 'aaaa')|... }}`, gigabytes a thousand times); here only
    template text is, and the rest is evaluated when rendering, in the render worker."""

    def _output_child_to_const(self, node, frame, finalize) -> str:
        if not isinstance(node, nodes.TemplateData):
            raise nodes.Impossible()
        return super()._output_child_to_const(node, frame, finalize)


class _VariableFinder(_NothingEvaluated, meta.TrackingCodeGenerator):
    """`meta.find_undeclared_variables`'s walk, folding nothing."""

    def __init__(self, environment) -> None:
        super().__init__(environment)
        self.optimizer = None


class _CodeGenerator(_NothingEvaluated, CodeGenerator):
    @optimizeconst
    def visit_Concat(self, node: nodes.Concat, frame) -> None:
        # `a ~ b` joins through environment.concat (bounded) instead of Jinja's str_join.
        self.write("environment.concat((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")


class _Sandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"+", "*", "%", "**"})
    code_generator_class = _CodeGenerator
    concat = staticmethod(bounded_concat)

    def is_safe_attribute(self, obj, attr, value) -> bool:
        return super().is_safe_attribute(obj, attr, value) and (not callable(value) or attr in SAFE_METHODS)

    def wrap_str_format(self, value):
        return None  # `str.format` is not offered wrapped: like every method, it must be in SAFE_METHODS

    def call(self, context, obj, /, *args, **kwargs):
        _check_arguments((*args, *kwargs.values()))
        return _check_size(super().call(context, obj, *args, **kwargs), "a method result")

    def call_binop(self, context, operator, left, right):
        # Refuse what would exhaust memory or CPU (`'a' * 10**9`, `9 ** 9 ** 9`, `'%999999999d' % 1`).
        if operator == "**" and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
            raise SecurityError("exponent too large")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int) and len(seq) * times > MAX_SEQUENCE:
                    raise SecurityError("sequence repetition too large")
        sequences = isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple)
        if operator == "+" and sequences and len(left) + len(right) > MAX_TEXT:
            raise _too_large("the sum")
        if operator == "%" and isinstance(left, str):
            if printf_too_wide(left):
                raise SecurityError("printf widths and precisions above 999 are not allowed")
            _check_arguments(right if isinstance(right, tuple) else (right,))
        result = super().call_binop(context, operator, left, right)
        if isinstance(result, int) and result.bit_length() > MAX_INT_BITS:
            raise SecurityError("number too large")
        return _check_size(result, "the result")


_LINE_BREAKS = re.compile(r"[\r\n]+")


def one_line(text: str) -> str:
    """Every run of white space that holds a line break becomes one space, in linear time (the
    regex `\\s*[\\r\\n]+\\s*` backtracks quadratically over long runs of spaces)."""
    if "\n" not in text and "\r" not in text:
        return text
    parts = _LINE_BREAKS.split(text)
    middle = [stripped for part in parts[1:-1] if (stripped := part.strip())]
    return " ".join([parts[0].rstrip(), *middle, parts[-1].lstrip()])


def printf_too_wide(fmt: str) -> bool:
    """Whether a printf conversion of `fmt` has a width or precision above 999 or taken from an
    argument (`*`), parsed as Python does, mapping keys (`%(name)999999s`, nested parentheses
    included) and all."""
    i, n = 0, len(fmt)
    while (i := fmt.find("%", i)) != -1:
        i += 1
        if i < n and fmt[i] == "(":
            depth = 1
            i += 1
            while i < n and depth:
                depth += {"(": 1, ")": -1}.get(fmt[i], 0)
                i += 1
        while i < n and fmt[i] in "-#0 +":
            i += 1
        for part in ("width", "precision"):
            if part == "precision":
                if i >= n or fmt[i] != ".":
                    break
                i += 1
            if i < n and fmt[i] == "*":
                return True
            start = i
            while i < n and fmt[i].isdigit():
                i += 1
            if i - start > MAX_PRINTF_DIGITS:
                return True
        i += 1  # the length modifier or conversion character (`%%` included)
    return False


def _finalize(value: object) -> str:
    """Every `{{ value }}`: French display, then markdown-escaped and defused."""
    text = _PRIVATE_USE.sub("", formatting.display(_check_size(value, "a printed value")))
    text = text.replace("{{", "{ {").replace("}}", "} }")  # never a signature anchor
    text = one_line(text)  # one value never opens a new markdown block
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def _build_environment() -> _Sandbox:
    env = _Sandbox(
        # No constant folding (nor printed constants, `_CodeGenerator`): Jinja would run filters on
        # literals while compiling, in the web process, outside the render worker's limits
        # (`{{ 'aaa'|replace('a', 'aaaa')|... }}` a thousand times is gigabytes). Unfolded,
        # compiling is linear in the source, and every filter runs in the render worker.
        optimized=False,
        undefined=StrictUndefined,
        autoescape=False,  # the output is markdown, escaped by _finalize; markdown-it escapes HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    env.globals.clear()
    filters = {name: env.filters[name] for name in SAFE_FILTERS} | {"join": _join, "replace": _replace}
    filters |= {"euros": formatting.euros_filter, "date_fr": formatting.date_filter}
    env.filters = {name: _bounded(function) for name, function in filters.items()}
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


def _syntax_error(exc: TemplateSyntaxError) -> ValidationError:
    return ValidationError(f"template syntax error line {exc.lineno}: {exc.message}", line=exc.lineno)


def nesting_depth(source: str) -> int:
    """How deep `source` nests, read from its tokens (lexing never recurses): the blocks open,
    plus, in the tag being read, its open brackets and its operators, attributes and filters so
    far. An upper bound of its syntax tree's depth."""
    deepest = blocks = brackets = operators = 0
    block_name_next = False
    try:
        for _, kind, value in _ENV.lex(source):
            if kind in ("block_begin", "variable_begin"):
                brackets = operators = 0
                block_name_next = kind == "block_begin"
                continue
            if block_name_next and kind == "name":
                blocks += 1 if value in _OPENING_BLOCKS else -1 if value.startswith("end") else 0
                block_name_next = False
                continue
            block_name_next = block_name_next and kind == "whitespace"
            if kind == "operator" and value in "([{":
                brackets += 1
            elif kind == "operator" and value in ")]}":
                brackets -= 1
            elif (kind == "operator" and value in _OPERATOR_SYMBOLS) or (kind == "name" and value in _OPERATOR_NAMES):
                operators += 1
            deepest = max(deepest, max(blocks, 0) + max(brackets, 0) + operators)
    except TemplateSyntaxError as exc:
        raise _syntax_error(exc) from None
    return max(deepest, blocks)


def _parse(source: str) -> nodes.Template:
    """The syntax tree, with the constructs that allow recursion refused, and the filters and tests
    it names known (what compiling would find): all the web process does with a template, whose
    compiling and rendering happen in the render worker."""
    depth = nesting_depth(source)
    if depth > MAX_NESTING:
        raise TemplateTooDeep(f"the template nests {depth} levels deep, at most {MAX_NESTING} are allowed",
                              depth=depth, maxDepth=MAX_NESTING)
    try:
        ast = _ENV.parse(source)
    except TemplateSyntaxError as exc:
        raise _syntax_error(exc) from None
    for node in ast.find_all((*_REFUSED_NODES, nodes.For)):
        if isinstance(node, nodes.For) and not node.recursive:
            continue
        construct = "recursive loops" if isinstance(node, nodes.For) else _REFUSED_NODES[type(node)]
        raise ValidationError(f"{construct} are not allowed in document templates (line {node.lineno})",
                              line=node.lineno)
    for node in ast.find_all((nodes.Filter, nodes.Test)):
        known, what = (_ENV.filters, "filter") if isinstance(node, nodes.Filter) else (_ENV.tests, "test")
        if node.name not in known:
            raise ValidationError(f"template syntax error line {node.lineno}: No {what} named {node.name!r}.",
                                  line=node.lineno)
    return ast


@lru_cache(maxsize=128)
def _compile(source: str):
    ast = _parse(source)
    try:
        return _ENV.from_string(ast)
    except TemplateSyntaxError as exc:  # an unknown filter or test is found when compiling
        raise _syntax_error(exc) from None


def check_template(content: str, *, declared: list[str], sample: dict | None = None) -> None:
    """Refuse content that does not parse, uses a refused construct, or names a variable the
    catalog does not declare; with `sample` (the catalog's examples), also content that exceeds
    the rendering limits with them. Other rendering errors are the preview's to show: they may
    depend on the data."""
    finder = _VariableFinder(_ENV)
    finder.visit(_parse(protect_anchors(content)[0]))
    unknown = sorted(finder.undeclared_identifiers - set(declared) - set(FRAME_KEYS))
    if unknown:
        raise ValidationError(f"the template uses undeclared variables: {', '.join(unknown)}", unknown=unknown)
    if sample is not None:
        try:
            render_markdown_source(content, {**dict.fromkeys(FRAME_KEYS), **sample})
        except ValidationError as exc:
            if exc.details.get("reason") == LIMIT_REASON:
                raise


def render_markdown_source(content: str, variables: dict) -> tuple[str, list[str]]:
    """Substitute `variables` into `content` in a bounded render worker: (markdown with
    placeholders, anchors). The syntax is checked here first (no process needed to refuse it)."""
    _check_syntax(content)
    return default_pool().render(content, variables)


@lru_cache(maxsize=128)
def _check_syntax(content: str) -> None:
    """`_parse` once per distinct content (a published version's never changes, and parsing a
    template is a visible share of every invoice PDF): a refusal raises, and is not cached."""
    _parse(protect_anchors(content)[0])


def render_in_process(content: str, variables: dict) -> tuple[str, list[str]]:
    """The render itself, in the current process: only `render_worker` calls it."""
    source, anchors = protect_anchors(content)
    template = _compile(source)
    try:
        return template.render(variables), anchors
    except SecurityError as exc:
        raise ValidationError(f"the template attempted a forbidden operation: {exc}",
                              reason=LIMIT_REASON) from None
    except ValidationError:
        raise
    except TemplateError as exc:
        raise ValidationError(f"the template could not be rendered: {exc.message}") from None
    except RecursionError:
        raise ValidationError("the template could not be rendered: it nests too deeply",
                              reason=LIMIT_REASON) from None
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
        raise ValidationError(f"the template could not be rendered: {exc}") from None
