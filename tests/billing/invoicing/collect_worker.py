"""A second process collecting reservations, for the gapless-numbering test.

`python -m tests.billing.invoicing.collect_worker ID...`: boots on the test database (environment), prints
`ready`, waits for a line on stdin, collects each reservation (bank transfer, one key each) and
prints `numbers:` and the invoice numbers as JSON.
"""

from __future__ import annotations

import json
import sys


def main(reservation_ids: list[str]) -> None:
    from backend.billing.collection import collect
    from backend.billing.models import PaymentMethod
    from backend.db import database
    from backend.marketplace.models import Reservation
    from backend.runtime import boot

    runtime = boot(role="test-worker")
    print("ready", flush=True)
    sys.stdin.readline()
    numbers = []
    with database.connection_context():
        for reservation_id in reservation_ids:
            reservation = Reservation.get_by_id(reservation_id)
            result = collect.collect(reservation_id=reservation_id,
                                        industrial_organization_id=reservation.industrial_organization_id,
                                        method=PaymentMethod.BANK_TRANSFER, key=f"process-{reservation_id}",
                                        user_id=None, config=runtime.config)
            numbers.append(result.invoice_number)
    print("numbers:" + json.dumps(numbers), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
