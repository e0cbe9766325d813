# An example to copy into your own policy directory (policy.directories); not loaded by default.
#
# A destructive call may be made by a person, or by an agent the person delegated to directly,
# but never further down a delegation chain: more than one hop from a person, it is refused.
# The limit comes from policy.data.delegation_max_destructive_hops when set (default 1).
# input.principal.actor_chain lists the chain (origin first, the acting agent last);
# input.principal.delegation says its depth, origin and hops_from_person (null without a person).
# (The reasons name the origin, not the whole chain: the audit record carries the chain.)
package colonnade.policy

import rego.v1

destructive_hops := object.get(data.colonnade.settings, "delegation_max_destructive_hops", 1)

deny contains reason if {
	input.tool.side_effects == "destructive"
	hops := input.principal.delegation.hops_from_person
	is_number(hops)
	hops > destructive_hops
	reason := sprintf(
		"%s is destructive and %s acts %v hops from %s: at most %v allowed",
		[input.tool.name, input.principal.id, hops, input.principal.delegation.origin, destructive_hops],
	)
}

deny contains reason if {
	input.tool.side_effects == "destructive"
	input.principal.delegation.depth > 0
	input.principal.delegation.hops_from_person == null
	reason := sprintf(
		"%s is destructive and no person began %s's chain (it began with %s)",
		[input.tool.name, input.principal.id, input.principal.delegation.origin],
	)
}
