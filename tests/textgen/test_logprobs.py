"""``include: ["message.output_text.logprobs"]`` and ``top_logprobs`` on the n-gram model (SDK, strict)."""

from __future__ import annotations

import math

import openai

MODEL = "textgen-ngram"


def test_greedy_tokens_are_the_most_likely_and_counts_match(client: openai.OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="Tell me about the weather.", temperature=0, top_logprobs=3,
                                include=["message.output_text.logprobs"], max_output_tokens=20)
    assert r.top_logprobs == 3 and r.usage is not None
    part = r.output[0].content[0]  # type: ignore[union-attr]
    assert len(part.logprobs) == r.usage.output_tokens > 0  # type: ignore[union-attr]
    for lp in part.logprobs:  # type: ignore[union-attr]
        assert lp.logprob <= 0 and lp.bytes == list(lp.token.encode())
        tops = [t.logprob for t in lp.top_logprobs]
        assert len(tops) == 3 and tops == sorted(tops, reverse=True) and sum(math.exp(t) for t in tops) <= 1 + 1e-9
        assert lp.top_logprobs[0].logprob == lp.logprob  # greedy: the chosen token is the likeliest
        assert lp.top_logprobs[0].token.lower() == lp.token.strip().lower()  # a word; the token as emitted
    assert "".join(lp.token for lp in part.logprobs) == part.text  # type: ignore[union-attr]


def test_stream_deltas_carry_the_same_logprobs(client: openai.OpenAI) -> None:
    kwargs = {"model": MODEL, "input": "bread and soup", "include": ["message.output_text.logprobs"],
              "max_output_tokens": 15, "extra_body": {"seed": 5}}
    with client.responses.stream(**kwargs) as stream:  # type: ignore[arg-type]
        events = list(stream)
    streamed = [lp.token for e in events if e.type == "response.output_text.delta" for lp in e.logprobs]
    final = events[-1].response.output[0].content[0].logprobs  # type: ignore[union-attr]
    assert streamed == [lp.token for lp in final] and all(lp.top_logprobs == [] for lp in final)
    plain = client.responses.create(model=MODEL, input="bread and soup", max_output_tokens=15, extra_body={"seed": 5})
    assert plain.output[0].content[0].logprobs == []  # type: ignore[union-attr]  # only when asked for
