"""Pipeline stages: one guarantee per module, all with the `(call, next)` signature."""
