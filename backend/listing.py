"""Server-paginated lists (API.md, Lists): page, pageSize, search, sortBy, sortDir.

Every admin list builds its filtered query and hands it here with its sort whitelist and search
columns. The page and the total come back from one SQL statement (`COUNT(*) OVER ()`), so a
list is one round trip. An unknown `sortBy` is a VALIDATION_ERROR: sort columns are looked up
in the whitelist, never interpolated.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import reduce
from typing import TypeVar

from peewee import SQL, Node, fn

from backend.errors import ValidationError

DEFAULT_PAGE_SIZE = 25
T = TypeVar("T")


@dataclass(frozen=True)
class ListParams:
    page: int = 1
    page_size: int = DEFAULT_PAGE_SIZE
    search: str | None = None
    sort_by: str | None = None
    sort_dir: str = "asc"

    @classmethod
    def from_query(cls, query: Mapping[str, object]) -> ListParams:
        """From a query loaded by `schemas.common.PageQuery` (camelCase keys)."""
        search = (query.get("search") or "").strip() or None
        return cls(
            page=query.get("page", 1),
            page_size=query.get("pageSize", DEFAULT_PAGE_SIZE),
            search=search,
            sort_by=query.get("sortBy") or None,
            sort_dir=query.get("sortDir", "asc"),
        )


@dataclass(frozen=True)
class Page:
    items: list
    total: int
    page: int
    page_size: int

    def as_dict(self, serialize: Callable[[object], dict]) -> dict:
        return {
            "items": [serialize(item) for item in self.items],
            "total": self.total,
            "page": self.page,
            "pageSize": self.page_size,
        }


def like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in `text` taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def sort_column(params: ListParams, sorts: Mapping[str, T], default_sort: str) -> T:
    """The whitelisted sort column `params` asks for (`default_sort` when none): an unknown
    `sortBy` is a VALIDATION_ERROR, so a sort column is never taken from the request."""
    if params.sort_by is not None and params.sort_by not in sorts:
        raise ValidationError(
            "unknown sort column", fields={"sortBy": [f"must be one of: {', '.join(sorted(sorts))}"]}
        )
    return sorts[params.sort_by or default_sort]


def paginate(
    query,
    params: ListParams,
    *,
    sorts: Mapping[str, Node],
    default_sort: str,
    tiebreaker: Node,
    search_columns: tuple[Node, ...] = (),
) -> Page:
    """One page of `query`, searched, sorted by a whitelisted column, with the total."""
    column = sort_column(params, sorts, default_sort)
    if params.search and search_columns:
        pattern = like_pattern(params.search)
        query = query.where(reduce(operator.or_, [searched.ilike(pattern) for searched in search_columns]))
    descending = params.sort_dir == "desc"
    ordering = [
        column.desc(nulls="LAST") if descending else column.asc(nulls="LAST"),
        tiebreaker.desc() if descending else tiebreaker.asc(),
    ]
    rows = list(
        query.select_extend(fn.COUNT(SQL("*")).over().alias("total_rows"))
        .order_by(*ordering)
        .limit(params.page_size)
        .offset((params.page - 1) * params.page_size)
    )
    if rows:
        total = rows[0].total_rows
    elif params.page > 1:
        total = query.count()  # past the last page: the window gave no row to read the total from
    else:
        total = 0
    return Page(items=rows, total=total, page=params.page, page_size=params.page_size)
