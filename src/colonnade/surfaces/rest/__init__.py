"""The REST surface: calls, the catalog and the envelope schemas as plain JSON under /v1."""
