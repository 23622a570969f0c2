"""The documents of an issued invoice (spec C): its immutable snapshot, the CII XML, the Factur-X
embedding, the PDF rendering and its storage. Built from the snapshot alone: the same invoice
always gives the same bytes."""
