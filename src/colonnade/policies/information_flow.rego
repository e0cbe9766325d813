# Shipped with Colonnade: data leaves only with a human's approval once untrusted text came in.
#
# A session that called a tool labelled ingests_untrusted (web pages, mail, tickets), or whose
# tool results held instructions aimed at the model (the prompt_injection guardrail), may have been
# steered by that text. A later call of a tool labelled egress (sends data out) in the same session
# then waits for an approver instead of running: require_approval parks it (it is not refused).
package colonnade.policy

import rego.v1

require_approval contains reason if {
	"egress" in input.tool.flow_labels
	"ingests_untrusted" in input.flow.labels
	reason := sprintf("%s sends data out after untrusted input in the same session", [input.tool.name])
}
