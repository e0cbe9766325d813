# Shipped with Colonnade: what changes the world for good waits for a human.
#
# A destructive tool, or one whose contract (or server override, or organ card) sets
# requires_human_approval, is allowed only with a human's approval: the obligation
# require_approval parks the call for an approver instead of running it.
package colonnade.policy

import rego.v1

require_approval contains reason if {
	input.tool.side_effects == "destructive"
	reason := sprintf("%s is destructive: a human must approve each call", [input.tool.name])
}

require_approval contains reason if {
	input.tool.requires_human_approval
	reason := sprintf("the contract of %s asks for a human's approval", [input.tool.name])
}
