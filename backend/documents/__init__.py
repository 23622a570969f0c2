"""Document templates: the catalog, draft and published versions, and PDF rendering.

`catalog` declares each template (versioned JSON files in `entries/`, default content in
`defaults/`); `versions` keeps drafts and published versions (metadata in PostgreSQL, content in
object storage); `rendering` turns a published version and a context into a PDF.
"""
