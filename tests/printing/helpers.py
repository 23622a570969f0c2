"""Deposit steps over HTTP shared by the printing tests (plain functions, not fixtures)."""

from __future__ import annotations

from tests.printing.test_print_assets_http import PDF, multipart


def upload(client, headers, data=PDF, filename="visuel.pdf") -> str:
    request = multipart(data, filename=filename)
    resp = client.simulate_post("/api/print-assets", body=request["body"], headers={**request["headers"], **headers})
    assert resp.status_code == 201, resp.json
    return resp.json["data"]["id"]


def attach(client, headers, reservation_id, zone_id, face_index, asset_id):
    return client.simulate_post(f"/api/reservations/{reservation_id}/upload/preflight", headers=headers,
                                json={"zoneId": zone_id, "faceIndex": face_index, "assetId": asset_id})


def confirm(client, headers, reservation_id, files, reuse=()):
    return client.simulate_post(
        f"/api/reservations/{reservation_id}/upload/confirm", headers=headers,
        json={"confirmedFiles": [{"zoneId": z, "faceIndex": f} for z, f in files],
              "reuse": [{"zoneId": z, "faceIndex": f} for z, f in reuse]},
    )
