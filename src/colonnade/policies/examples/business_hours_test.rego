# Tests of business_hours.rego; `colonnade policy test` runs them (see approval_test.rego for why
# input keys are replaced one by one).
package colonnade.business_hours_test

import rego.v1

agent := {"kind": "agent", "id": "invoice-bot"}

user := {"kind": "user", "id": "alice"}

write := {"name": "acme:billing:send_invoice", "side_effects": "write"}

read := {"name": "acme:billing:get_invoice", "side_effects": "read"}

tuesday_10 := {"time_zone": "Europe/Paris", "local": {"weekday": "Tuesday", "hour": 10}}

tuesday_20 := {"time_zone": "Europe/Paris", "local": {"weekday": "Tuesday", "hour": 20}}

sunday_10 := {"time_zone": "Europe/Paris", "local": {"weekday": "Sunday", "hour": 10}}

test_an_agent_writes_during_business_hours if {
	agent_ := agent
	write_ := write
	tuesday_10_ := tuesday_10
	count(data.colonnade.decision.deny) == 0 with input.principal as agent_ with input.tool as write_ with input.time as tuesday_10_
}

test_an_agent_may_not_write_in_the_evening if {
	agent_ := agent
	write_ := write
	tuesday_20_ := tuesday_20
	count(data.colonnade.decision.deny) == 1 with input.principal as agent_ with input.tool as write_ with input.time as tuesday_20_
}

test_an_agent_may_not_write_on_sunday if {
	agent_ := agent
	write_ := write
	sunday_10_ := sunday_10
	count(data.colonnade.decision.deny) == 1 with input.principal as agent_ with input.tool as write_ with input.time as sunday_10_
}

test_an_agent_reads_at_any_hour if {
	agent_ := agent
	read_ := read
	tuesday_20_ := tuesday_20
	count(data.colonnade.decision.deny) == 0 with input.principal as agent_ with input.tool as read_ with input.time as tuesday_20_
}

test_a_person_writes_at_any_hour if {
	user_ := user
	write_ := write
	sunday_10_ := sunday_10
	count(data.colonnade.decision.deny) == 0 with input.principal as user_ with input.tool as write_ with input.time as sunday_10_
}

test_hours_come_from_the_settings if {
	agent_ := agent
	write_ := write
	tuesday_20_ := tuesday_20
	count(data.colonnade.decision.deny) == 0 with input.principal as agent_ with input.tool as write_ with input.time as tuesday_20_ with data.colonnade.settings.business_hours as {"start": 8, "end": 22}
}
