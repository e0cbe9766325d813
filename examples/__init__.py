"""Runnable examples: demo contracts and the demo backend that serves them."""
