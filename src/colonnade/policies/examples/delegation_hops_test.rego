# Tests of delegation_hops.rego; `colonnade policy test src/colonnade/policies/examples` runs them
# (see ../approval_test.rego for why input keys are replaced one by one, through locals).
package colonnade.delegation_hops_test

import rego.v1

a_drop := {"name": "acme:items:drop_item", "side_effects": "destructive"}

a_read := {"name": "acme:items:read_item", "side_effects": "read"}

alice := {
	"kind": "user", "id": "alice", "actor_chain": [],
	"delegation": {"depth": 0, "origin": "user:alice", "hops_from_person": 0},
}

one_hop := {
	"kind": "agent", "id": "planner", "actor_chain": ["user:alice", "agent:planner"],
	"delegation": {"depth": 1, "origin": "user:alice", "hops_from_person": 1},
}

two_hops := {
	"kind": "agent", "id": "researcher", "actor_chain": ["user:alice", "agent:planner", "agent:researcher"],
	"delegation": {"depth": 2, "origin": "user:alice", "hops_from_person": 2},
}

no_person := {
	"kind": "agent", "id": "researcher", "actor_chain": ["agent:planner", "agent:researcher"],
	"delegation": {"depth": 1, "origin": "agent:planner", "hops_from_person": null},
}

test_a_person_drops if {
	who := alice
	tool := a_drop
	count(data.colonnade.decision.deny) == 0 with input.principal as who with input.tool as tool
}

test_the_persons_own_agent_drops if {
	who := one_hop
	tool := a_drop
	count(data.colonnade.decision.deny) == 0 with input.principal as who with input.tool as tool
}

test_two_hops_from_the_person_may_not_drop if {
	who := two_hops
	tool := a_drop
	count(data.colonnade.decision.deny) == 1 with input.principal as who with input.tool as tool
}

test_two_hops_from_the_person_still_read if {
	who := two_hops
	tool := a_read
	count(data.colonnade.decision.deny) == 0 with input.principal as who with input.tool as tool
}

test_a_chain_without_a_person_may_not_drop if {
	who := no_person
	tool := a_drop
	count(data.colonnade.decision.deny) == 1 with input.principal as who with input.tool as tool
}
