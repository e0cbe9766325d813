# An example to copy into your own policy directory (policy.directories); not loaded by default.
#
# The built-in flow rule parks egress after untrusted input for an approver. This one goes further
# for the "lethal trifecta": a session that read private data and took in untrusted text may not
# send anything out at all, approved or not.
package colonnade.policy

import rego.v1

deny contains reason if {
	"egress" in input.tool.flow_labels
	"reads_private" in input.flow.labels
	"ingests_untrusted" in input.flow.labels
	reason := sprintf("%s may not send data out of a session that read private data and untrusted input", [input.tool.name])
}
