"""The ledger: the only code that reads or writes transactions.

A user's ledger is read once per ledger version, as columns
(:mod:`service.ledger.columns`, amounts exact in :mod:`service.ledger.fixed`), through
the request's own connection (:mod:`service.ledger.read`); what features need is
derived from those columns by ``quantcore`` (:mod:`service.ledger.derived`) and kept in
one derivation cache keyed by the version (:mod:`service.ledger.cache`). Writes
(:mod:`service.ledger.writes`) lock the user's ledger, check what they change
(:mod:`service.ledger.checks`, :mod:`service.ledger.lots`, :mod:`service.ledger.cash`),
re-derive positions (:mod:`service.ledger.positions`) and bump the version.

Features (portfolios, transactions, analytics, tax, imports, realtime) import this
package and the shared modules, never each other; ``docs/service.md`` ("The ledger")
has the diagram and the import contracts.
"""

__all__: list[str] = []
