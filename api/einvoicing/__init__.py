"""E-invoicing routes (Specification C): the admin back-office and the deprecated operator webhook."""
