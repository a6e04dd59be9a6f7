"""schemathesis over textgen's own OpenAPI document, against the real server: no request is a 5xx.

Every operation of the document (bodies included: their schemas come from the
request Structs) gets generated requests with the test key; any 5xx fails. The
cases are drawn by hypothesis from each operation's strategy (schemathesis's
pytest plugin does not load under this pytest), derandomized so CI is repeatable.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings

EXAMPLES_PER_OPERATION = 25


def test_no_server_errors(server: str, auth_headers: dict[str, str]) -> None:
    root = server.removesuffix("/v1")
    schema = schemathesis.openapi.from_url(f"{root}/openapi/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20  # every route of the API is in the document
    errors: list[tuple[Any, ...]] = []
    statuses: list[int] = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case: schemathesis.Case) -> None:
            response = case.call(base_url=root, headers=auth_headers, timeout=30)
            statuses.append(response.status_code)
            if response.status_code >= 500:
                errors.append((case.method, case.formatted_path, case.query, case.body, response.status_code,
                               response.text[:300]))

        check()
    assert errors == []
    assert len(statuses) >= 5 * len(operations)  # the run really exercised every operation
    assert {200, 400, 404} <= set(statuses)
