"""The ledger (``/api/transactions/``): the source of truth for positions."""
