"""Token usage: what agents record of it per response, and its cost at published prices (domain).

:mod:`store.usage.tokens` reads the usage each agent format records into one
:class:`~store.usage.tokens.TokenUsage`; :mod:`store.usage.prices` holds the dated price table
(LiteLLM's ``model_prices_and_context_window.json`` format, written for the models the store
meets, refreshable and overridable) and prices a usage, never guessing a model it lacks.
"""
