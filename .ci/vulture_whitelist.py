"""What `vulture` cannot see used (pyproject.toml [tool.vulture], .ci/dead_code.py): names a
framework or a protocol reads. Anything else it reports is dead: delete it."""

from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# peewee: model options, field factories and columns assigned before `save()` (models.py is not scanned)
_.legacy_table_names, _.status_field, _.id_field, _.review_note, _.approved_at, _.last_error
_.skipped_no_mandate, _.skipped_open_incident, _.skipped_not_due, _.skipped_orders, _.failed_orders
# psycopg2 connection and cursor options
_.autocommit, _.cursor_factory
# falcon: app option, and the file name `api.responses` reads back for downloads
_.strip_url_path_trailing_slash, _.downloadable_as
# pikepdf: PDF dictionary keys written as attributes
_.Names, _.EmbeddedFiles, _.AF, _.Info, _.CreationDate, _.ModDate, _.Type, _.Subtype, _.Params
# jinja2 sandbox hooks
_.intercepted_binops, _.code_generator_class, _.concat, _.wrap_str_format, _.optimizer
# logging module switches
_._srcfile, _.logMultiprocessing, _.logProcesses, _.logThreads
# periodiq's Scheduler hook; a file object's protocol (GCS upload stream)
_.send_actors, _.tell
# ops/bench scenario protocol (`NAME`, ops/bench/__init__.py); the simulators' test-facing methods
_.NAME, _.idle, _.add_company, _.clear_faults
# the domain clock's test seam (`backend/clock.py`)
_.frozen_at
# a closed list of provider values (the e-signature authentication modes, migration 040)
_.NO_OTP
# spec A's default verification policy and its API.md setting: no signature outside onboarding
# uses it yet (onboarding signs everything `qualified`)
_.default_policy, _.esign_contract_threshold_cents
# printing: the columns of a SELECT row named in its NamedTuple, and the delivery address id the
# batch deposit accepts but does not read yet (left to that area)
_.store_street, _.store_postal_code, _.store_country, _.address_id
