# An example to copy into your own policy directory (policy.directories); not loaded by default.
#
# Agents may not call write or destructive tools outside the business hours of the tool's tenant,
# in the tenant's time zone (policy.time_zones). Hours and days come from
# policy.data.business_hours ({start, end, days}) when set, else 09:00-18:00, Monday to Friday.
package colonnade.policy

import rego.v1

business_hours := object.union(
	{"start": 9, "end": 18, "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]},
	object.get(data.colonnade.settings, "business_hours", {}),
)

deny contains reason if {
	input.principal.kind == "agent"
	input.tool.side_effects in {"write", "destructive"}
	not within_business_hours
	reason := sprintf(
		"agents may not call %s tools outside business hours (%v:00-%v:00 %s, %s now)",
		[input.tool.side_effects, business_hours.start, business_hours.end, input.time.time_zone, input.time.local.weekday],
	)
}

within_business_hours if {
	input.time.local.weekday in business_hours.days
	input.time.local.hour >= business_hours.start
	input.time.local.hour < business_hours.end
}
