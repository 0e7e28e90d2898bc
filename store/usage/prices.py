"""Per-token prices and what a usage costs (domain).

The table is LiteLLM's ``model_prices_and_context_window.json`` format (the list ccusage
prices with): one entry per model name, ``input_cost_per_token``, ``output_cost_per_token``,
``cache_creation_input_token_cost``, ``cache_read_input_token_cost`` and, where a price
changes past 200,000 tokens, the ``*_above_200k_tokens`` variants. The package ships its own
dated table (``prices.json``, written from the providers' published list prices for the
models the store meets; its ``sample_spec.as_of`` is the date). A user refreshes or overrides
it with a file in the same format (LiteLLM's own file works): ``--prices FILE`` or the
``TRANSCRIPT_STORE_PRICES`` environment variable; the file's entries win over the shipped ones.

**Never a guess.** A model is found by its exact name, case aside, or without a provider
prefix (``anthropic/``, ``openai/`` ...) or with the ``gemini/`` / ``anthropic/`` /
``openai/`` prefix LiteLLM gives some names; nothing fuzzier. A model that is not found has no
cost (``None``): reports show its tokens and say that it has no price.

**Cost of one response** (as ccusage computes it): each of the four counts times its price; a
count over 200,000 pays the ``above_200k`` price for the part above when the model has one; a
price the entry lacks counts 0 (OpenAI and Google entries have no cache-creation price: their
caches are not billed on write).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.core.arguments import loads_json
from store.core.errors import ConfigurationError
from store.usage.tokens import TokenUsage

__all__ = ["PRICES_ENV", "ModelPrice", "PriceTable", "load_prices"]

#: The environment variable naming a price file that overrides the shipped table.
PRICES_ENV = "TRANSCRIPT_STORE_PRICES"
#: Where tiered prices start (Anthropic's and Google's long-context prices).
TIER_TOKENS = 200_000
_PREFIXES = ("anthropic/", "openai/", "gemini/", "google/", "vertex_ai/", "bedrock/")
#: The counts a price applies to, in the order the costs take them.
_COUNTS = ("input", "output", "cache_creation", "cache_read")
_FIELDS = {
    "input": "input_cost_per_token",
    "output": "output_cost_per_token",
    "cache_creation": "cache_creation_input_token_cost",
    "cache_read": "cache_read_input_token_cost",
}


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """A model's price per token (USD) for each count, and above 200k tokens where it differs."""

    model: str
    input: float = 0.0
    output: float = 0.0
    cache_creation: float = 0.0
    cache_read: float = 0.0
    above: tuple[tuple[str, float], ...] = ()
    #: Per count (``_COUNTS``' order): its price and its price past the tier, if it differs.
    _rates: tuple[tuple[float, float | None], ...] = field(init=False, compare=False,
                                                            repr=False)

    def __post_init__(self) -> None:
        tiered = dict(self.above)
        object.__setattr__(self, "_rates", tuple(
            (float(getattr(self, name)), tiered.get(name)) for name in _COUNTS))

    def cost_of_sums(self, totals: Sequence[int], past: Sequence[int]) -> float:
        """What many responses cost together, from their summed input, output, cache creation
        and cache read tokens (``totals``) and, per count, the tokens past the tier
        threshold summed over the responses past it (``past``): each response's
        ``tier * price + (tokens - tier) * higher`` summed is ``price * total + (higher -
        price) * past``."""
        if not self.above and len(totals) == 4:  # (the same sums in the same order, unrolled)
            return (0.0 + totals[0] * float(self.input) + totals[1] * float(self.output)
                    + totals[2] * float(self.cache_creation)
                    + totals[3] * float(self.cache_read))
        total = 0.0
        for (base, high), tokens, beyond in zip(self._rates, totals, past, strict=True):
            total += tokens * base
            if high is not None and beyond:
                total += beyond * (high - base)
        return total

    def cost(self, usage: TokenUsage) -> float:
        """What one response cost (:meth:`cost_of_sums` of itself)."""
        counts = (usage.input_tokens, usage.output_tokens, usage.cache_creation_tokens,
                  usage.cache_read_tokens)
        return self.cost_of_sums(counts, [max(n - TIER_TOKENS, 0) for n in counts])


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _entry(model: str, raw: Mapping[str, Any]) -> ModelPrice | None:
    """A LiteLLM entry as a price; ``None`` for an entry with no token price (an image or
    embedding model, LiteLLM's ``sample_spec``)."""
    values = {name: _number(raw.get(key)) for name, key in _FIELDS.items()}
    if values["input"] is None and values["output"] is None:
        return None
    above = tuple((name, price) for name, key in _FIELDS.items()
                  if (price := _number(raw.get(f"{key}_above_{TIER_TOKENS // 1000}k_tokens")))
                  is not None)
    return ModelPrice(model, values["input"] or 0.0, values["output"] or 0.0,
                      values["cache_creation"] or 0.0, values["cache_read"] or 0.0, above)


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Model prices by lower-cased name, and where they came from (``sources``: each file's
    name with its ``as_of`` date when it gives one)."""

    prices: Mapping[str, ModelPrice]
    sources: tuple[str, ...]
    #: Each model name asked already and its price (a report prices thousands of groups).
    _found: dict[str | None, ModelPrice | None] = field(default_factory=dict, init=False,
                                                        compare=False, repr=False)

    @classmethod
    def parse(cls, text: str | bytes, source: str) -> PriceTable:
        """A table from the text of a LiteLLM-format file (``source`` names it in errors)."""
        try:
            document = loads_json(text)
        except ValueError as exc:
            raise ConfigurationError(f"price file {source}: not JSON: {exc}") from None
        if not isinstance(document, Mapping):
            raise ConfigurationError(f"price file {source}: must be a JSON object of models "
                                     "(LiteLLM's model_prices_and_context_window.json format)")
        prices: dict[str, ModelPrice] = {}
        for model, raw in document.items():
            if isinstance(model, str) and isinstance(raw, Mapping):
                found = _entry(model, raw)
                if found is not None:
                    prices[model.lower()] = found
        spec = document.get("sample_spec")
        as_of = spec.get("as_of") if isinstance(spec, Mapping) else None
        return cls(prices, (f"{source} (as of {as_of})" if isinstance(as_of, str) else source,))

    @classmethod
    def shipped(cls) -> PriceTable:
        """The package's own dated table."""
        text = Path(__file__).with_name("prices.json").read_bytes()
        return cls.parse(text, "shipped price table")

    @classmethod
    def from_file(cls, path: Path | str) -> PriceTable:
        try:
            text = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigurationError(f"price file {path}: cannot read: "
                                     f"{exc.strerror or type(exc).__name__}") from None
        return cls.parse(text, str(path))

    def over(self, base: PriceTable) -> PriceTable:
        """This table's prices, then ``base``'s for the models this one lacks."""
        return PriceTable({**base.prices, **self.prices}, self.sources + base.sources)

    def price(self, model: str | None) -> ModelPrice | None:
        """The price of ``model`` (exact name, case aside; or without / with a provider
        prefix), ``None`` when the table has none."""
        if model in self._found:
            return self._found[model]
        found = self._look_up(model)
        self._found[model] = found
        return found

    def _look_up(self, model: str | None) -> ModelPrice | None:
        if not model:
            return None
        name = model.lower()
        candidates = [name]
        for prefix in _PREFIXES:
            if name.startswith(prefix):
                candidates.append(name[len(prefix):])
        candidates += [prefix + name for prefix in _PREFIXES]
        for candidate in candidates:
            found = self.prices.get(candidate)
            if found is not None:
                return found
        return None

    def cost_of_sums(self, model: str | None, totals: Sequence[int],
                     past: Sequence[int]) -> float | None:
        """:meth:`ModelPrice.cost_of_sums` at ``model``'s price; ``None`` without one."""
        found = self.price(model)
        return None if found is None else found.cost_of_sums(totals, past)

    def cost(self, usage: TokenUsage) -> float | None:
        """What ``usage`` cost at its model's price; ``None`` when the model has no price."""
        found = self.price(usage.model)
        return None if found is None else found.cost(usage)


def load_prices(path: Path | str | None = None,
                environ: Mapping[str, str] | None = None) -> PriceTable:
    """The shipped table, overridden by ``path`` if given, else by the file that
    ``TRANSCRIPT_STORE_PRICES`` names."""
    shipped = PriceTable.shipped()
    chosen = path if path is not None else (environ if environ is not None
                                            else os.environ).get(PRICES_ENV)
    if not chosen:
        return shipped
    return PriceTable.from_file(chosen).over(shipped)
