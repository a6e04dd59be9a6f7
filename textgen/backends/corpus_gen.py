"""Writes ``corpus.txt``, the license-clean training text of the built-in model.

Every sentence is composed here from templates and word lists written for this
project, so the corpus carries no third-party text. The output is deterministic
(seeded), so ``python -m textgen.backends.corpus_gen`` reproduces the shipped file
byte for byte.
"""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["PARAGRAPHS", "build_corpus", "main"]

_TOPICS: dict[str, dict[str, list[str]]] = {
    "markets": {
        "subject": ["the market", "the index", "the fund", "the portfolio", "the analyst",
                    "the trader", "the bond desk", "the central bank", "the company",
                    "the investor", "the stock", "the currency", "the sector"],
        "verb": ["rose", "fell", "recovered", "traded", "closed", "opened", "rallied",
                 "slipped", "held steady", "moved"],
        "tail": ["after the earnings report", "on strong volume", "in early trading",
                 "by the end of the week", "as rates climbed", "despite the weak data",
                 "ahead of the meeting", "for the third day in a row",
                 "while volatility stayed low", "as prices adjusted"],
        "fact": ["risk is the price of return", "a diversified portfolio lowers the variance",
                 "the drawdown measures the fall from the last peak",
                 "the sharpe ratio compares excess return with volatility",
                 "a moving average smooths the price series",
                 "interest rates shape the value of every bond",
                 "liquidity matters most when markets are stressed",
                 "a stop order limits the loss on a position",
                 "the yield curve shows rates across maturities",
                 "returns compound over time"],
    },
    "weather": {
        "subject": ["the storm", "the wind", "the rain", "the morning", "the forecast",
                    "the river", "the coast", "the valley", "the cold front", "the sun"],
        "verb": ["arrived", "passed", "cleared", "returned", "eased", "grew stronger",
                 "moved east", "settled", "lingered", "faded"],
        "tail": ["before noon", "over the hills", "during the night", "along the coast",
                 "by the afternoon", "as the clouds gathered", "after a long dry spell",
                 "under a grey sky", "across the plains", "near the harbor"],
        "fact": ["warm air holds more water than cold air", "fog forms when moist air cools",
                 "the barometer falls before a storm", "snow reflects most of the sunlight",
                 "wind flows from high pressure to low pressure",
                 "a rainbow needs both sun and rain", "clouds are made of tiny drops of water",
                 "the ocean stores heat through the winter"],
    },
    "kitchen": {
        "subject": ["the cook", "the baker", "the soup", "the bread", "the sauce", "the recipe",
                    "the oven", "the garden", "the kitchen", "the market stall"],
        "verb": ["simmered", "rested", "browned", "cooled", "rose", "improved", "thickened",
                 "was ready", "smelled wonderful", "needed more salt"],
        "tail": ["after an hour", "on a low flame", "with fresh herbs", "before dinner",
                 "in the cast iron pan", "with a little butter", "overnight in the fridge",
                 "with lemon and pepper", "for the whole family", "on a cold evening"],
        "fact": ["salt draws water out of vegetables", "yeast needs warmth to rise",
                 "a sharp knife is safer than a dull one", "resting meat keeps it juicy",
                 "acid brightens a heavy sauce", "bread dough needs time to develop",
                 "fresh herbs go in at the end", "a hot pan stops food from sticking"],
    },
    "software": {
        "subject": ["the server", "the test suite", "the compiler", "the database", "the team",
                    "the function", "the release", "the service", "the query", "the cache",
                    "the model", "the request"],
        "verb": ["passed", "failed", "returned", "finished", "started", "improved", "slowed down",
                 "scaled", "recovered", "answered"],
        "tail": ["after the upgrade", "under heavy load", "in the staging cluster",
                 "before the deadline", "with a clear error", "on the first try",
                 "once the index was built", "in under a second", "after the refactor",
                 "with every request"],
        "fact": ["a test that cannot fail proves nothing", "small modules are easier to read",
                 "an index makes the query fast", "a cache trades memory for speed",
                 "clear errors save hours of debugging", "types document the intent of the code",
                 "a good interface hides the details", "measure before you optimize",
                 "every request deserves a clear answer", "simple code is easy to change"],
    },
    "travel": {
        "subject": ["the train", "the ferry", "the road", "the village", "the guide",
                    "the traveler", "the museum", "the old bridge", "the market square",
                    "the hotel"],
        "verb": ["was quiet", "was crowded", "opened", "closed early", "welcomed us",
                 "looked beautiful", "was late", "was on time", "surprised everyone",
                 "felt familiar"],
        "tail": ["in the morning light", "at the end of the season", "after the long journey",
                 "during the festival", "beside the lake", "under the old trees",
                 "on the far side of the river", "at sunset", "in the heart of the city",
                 "near the mountains"],
        "fact": ["a good map saves time", "the best meals are often found in small places",
                 "early trains are the least crowded", "walking shows a city best",
                 "a few local words open many doors", "light luggage makes every trip easier"],
    },
    "science": {
        "subject": ["the experiment", "the telescope", "the cell", "the sample", "the theory",
                    "the measurement", "the student", "the laboratory", "the result",
                    "the planet"],
        "verb": ["confirmed the idea", "showed a clear pattern", "surprised the researchers",
                 "needed more data", "was repeated", "held up", "changed the plan",
                 "was published", "raised new questions", "was measured again"],
        "tail": ["after careful checks", "with a larger sample", "over many nights",
                 "in the cold room", "under the microscope", "with better instruments",
                 "across three trials", "at the field station", "during the summer",
                 "with a simple model"],
        "fact": ["light travels faster than sound", "water boils at a lower temperature on a mountain",
                 "a good experiment changes one thing at a time",
                 "the mean is sensitive to outliers", "the median is robust to outliers",
                 "energy is conserved in a closed system", "plants turn light into sugar",
                 "a random sample represents the population",
                 "correlation does not imply causation"],
    },
}

_OPENERS = ["in short,", "for example,", "as a result,", "in the end,", "at first,", "later,",
            "meanwhile,", "on the whole,", "still,", "of course,"]
_LINKS = ["and", "but", "so", "while", "because"]
_ANSWERS = [
    "here is a short answer.", "that is a good question.", "the answer depends on the details.",
    "there are a few things to consider.", "let us look at it step by step.",
    "i can help with that.", "this is what i know.", "thank you for asking.",
]


def _sentence(rng: random.Random, topic: dict[str, list[str]]) -> str:
    """Compose one sentence from a topic's word lists."""
    kind = rng.random()
    if kind < 0.3:
        text = rng.choice(topic["fact"])
        if rng.random() < 0.3:
            text = f"{rng.choice(_OPENERS)} {text}"
    elif kind < 0.7:
        text = f"{rng.choice(topic['subject'])} {rng.choice(topic['verb'])} {rng.choice(topic['tail'])}"
    else:
        first = f"{rng.choice(topic['subject'])} {rng.choice(topic['verb'])}"
        second = f"{rng.choice(topic['subject'])} {rng.choice(topic['verb'])} {rng.choice(topic['tail'])}"
        text = f"{first}, {rng.choice(_LINKS)} {second}"
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", ".", "!"])


def build_corpus(paragraphs: int = 1200, seed: int = 20261122) -> str:
    """Return the corpus text: paragraphs of 2-5 sentences, blank-line separated."""
    rng = random.Random(seed)
    names = list(_TOPICS)
    out: list[str] = []
    for _ in range(paragraphs):
        topic = _TOPICS[rng.choice(names)]
        sentences = [_sentence(rng, topic) for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.15:
            answer = rng.choice(_ANSWERS)
            sentences.insert(0, answer[0].upper() + answer[1:])
        out.append(" ".join(sentences))
    return "\n\n".join(out) + "\n"


PARAGRAPHS = 1200


def main() -> None:
    """Write ``corpus.txt`` beside this module."""
    path = Path(__file__).with_name("corpus.txt")
    path.write_text(build_corpus(PARAGRAPHS), encoding="utf-8")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
