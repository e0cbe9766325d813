"""Runtime: the composition root (`runtime.gateway.Gateway`) and what feeds it at start-up."""
