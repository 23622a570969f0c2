"""The printing routes' request and response shapes are in `/api/openapi.json` (API.md: the
deposit routes' shapes are the team's to design and must be complete there)."""

import json
import re

DEPOSIT_BODIES = {
    ("/api/reservations/{reservation_id}/upload/confirm", "post"): "DepositConfirmIn",
    ("/api/reservations/{reservation_id}/print-support", "patch"): "PrintSupportIn",
    ("/api/print-batches/{batch_id}/preview", "post"): "BatchDepositIn",
    ("/api/print-batches/{batch_id}/confirm", "post"): "BatchDepositIn",
    ("/api/print-batches/{batch_id}/upload/preflight-from-asset", "post"): "PreflightFromAssetIn",
}


def test_every_printing_route_documents_its_answer_and_every_reference_resolves(client):
    spec = client.simulate_get("/api/openapi.json").json
    schemas = spec["components"]["schemas"]
    for ref in set(re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(spec))):
        assert ref in schemas, ref
    printing = {path: ops for path, ops in spec["paths"].items()
                if re.search(r"print|gabarits|impressions|upload", path)}
    assert len(printing) >= 40
    for path, operations in printing.items():
        for method, operation in operations.items():
            assert {"200", "201"} & set(operation["responses"]), (path, method)
            assert operation.get("x-access"), (path, method)


def test_deposit_and_batch_bodies_are_described(client):
    spec = client.simulate_get("/api/openapi.json").json
    for (path, method), schema in DEPOSIT_BODIES.items():
        body = spec["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
        assert body["$ref"].endswith(f"/{schema}"), (path, method)
    preview = spec["components"]["schemas"]["PreviewOut"]["properties"]
    assert {"recap", "zones", "reservations", "exclusions"} <= set(preview)
    assert "allocations" in spec["components"]["schemas"]["BatchDepositIn"]["properties"]
