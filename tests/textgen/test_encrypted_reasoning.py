"""``include: ["reasoning.encrypted_content"]``: a sealed reasoning item a ``store: false`` client
sends back; the SDK (strict validation) over the app in-process."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from cryptography.fernet import Fernet
from litestar.testing import TestClient

from textgen.app import create_app
from textgen.settings import Settings

sys.path.insert(0, str(Path(__file__).parent))
from fake_backends import ThinkingBackend

MODEL = "thinking-test"


@pytest.fixture
def sdk(tmp_path: Path) -> Iterator[openai.OpenAI]:
    app = create_app(Settings(data_dir=str(tmp_path), api_keys=("k",), rate_limit_per_minute=0),
                     backends=[ThinkingBackend()])
    with TestClient(app) as http:
        yield openai.OpenAI(base_url="http://testserver.local/v1", api_key="k", http_client=http, max_retries=0,
                            _strict_response_validation=True)


def _reasoning(response: Any) -> dict[str, Any]:
    (item,) = [o for o in response.output if o.type == "reasoning"]
    dumped: dict[str, Any] = item.model_dump(exclude_none=True)
    return dumped


def test_sealed_reasoning_round_trip(sdk: openai.OpenAI) -> None:
    first = sdk.responses.create(model=MODEL, input="hi", store=False, include=["reasoning.encrypted_content"])
    sealed = _reasoning(first)
    blob = sealed["encrypted_content"]
    assert isinstance(blob, str) and "chain of thought" not in blob
    plain = _reasoning(sdk.responses.create(model=MODEL, input="hi", store=False))
    assert "encrypted_content" not in plain  # only when asked for

    back = [{"role": "user", "content": "hi"}, {**sealed, "content": []}, *(
        o.model_dump(exclude_none=True) for o in first.output if o.type == "message"),
        {"role": "user", "content": "more"}]
    second = sdk.responses.create(model=MODEL, input=back, store=True)  # type: ignore[arg-type]
    assert second.status == "completed"
    items = sdk.responses.input_items.list(second.id, order="asc").data
    restored = [i for i in items if i.type == "reasoning"]
    assert restored[0].content[0].text == "private chain of thought"  # type: ignore[union-attr,index]

    for bad in (blob[:-4] + "AAAA", Fernet(Fernet.generate_key()).encrypt(b'{"content": []}').decode()):
        with pytest.raises(openai.BadRequestError) as refused:
            sdk.responses.create(model=MODEL, store=False, input=[{**sealed, "encrypted_content": bad}])  # type: ignore[list-item]
        assert refused.value.body["code"] == "invalid_encrypted_content"  # type: ignore[index]
        assert refused.value.body["param"] == "input[0].encrypted_content"  # type: ignore[index]


def test_unsupported_include_names_it(sdk: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.responses.create(model=MODEL, input="x", include=["reasoning.encrypted_content",
                                                               "message.output_text.logprobs"])
    assert refused.value.body["param"] == "include[1]"  # type: ignore[index]
    assert refused.value.body["code"] == "unsupported_value"  # type: ignore[index]


def test_top_logprobs_is_known_but_unsupported(sdk: openai.OpenAI) -> None:
    assert sdk.responses.create(model=MODEL, input="x", top_logprobs=0).top_logprobs == 0
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.responses.create(model=MODEL, input="x", top_logprobs=3)
    assert refused.value.body["param"] == "top_logprobs"  # type: ignore[index]
    assert refused.value.body["code"] == "unsupported_value"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as out_of_range:
        sdk.responses.create(model=MODEL, input="x", top_logprobs=21)
    assert out_of_range.value.body["param"] == "top_logprobs"  # type: ignore[index]
