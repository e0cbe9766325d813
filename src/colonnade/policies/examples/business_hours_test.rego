# Tests of business_hours.rego; `colonnade policy test src/colonnade/policies/examples` runs them
# (see ../approval_test.rego for why input keys are replaced one by one, through locals).
package colonnade.business_hours_test

import rego.v1

an_agent := {"kind": "agent", "id": "invoice-bot"}

a_person := {"kind": "user", "id": "alice"}

a_write := {"name": "acme:billing:send_invoice", "side_effects": "write"}

a_read := {"name": "acme:billing:get_invoice", "side_effects": "read"}

tuesday_10 := {"time_zone": "Europe/Paris", "local": {"weekday": "Tuesday", "hour": 10}}

tuesday_20 := {"time_zone": "Europe/Paris", "local": {"weekday": "Tuesday", "hour": 20}}

sunday_10 := {"time_zone": "Europe/Paris", "local": {"weekday": "Sunday", "hour": 10}}

test_an_agent_writes_during_business_hours if {
	who := an_agent
	tool := a_write
	now := tuesday_10
	count(data.colonnade.decision.deny) == 0 with input.principal as who with input.tool as tool with input.time as now
}

test_an_agent_may_not_write_in_the_evening if {
	who := an_agent
	tool := a_write
	now := tuesday_20
	count(data.colonnade.decision.deny) == 1 with input.principal as who with input.tool as tool with input.time as now
}

test_an_agent_may_not_write_on_sunday if {
	who := an_agent
	tool := a_write
	now := sunday_10
	count(data.colonnade.decision.deny) == 1 with input.principal as who with input.tool as tool with input.time as now
}

test_an_agent_reads_at_any_hour if {
	who := an_agent
	tool := a_read
	now := tuesday_20
	count(data.colonnade.decision.deny) == 0 with input.principal as who with input.tool as tool with input.time as now
}

test_a_person_writes_at_any_hour if {
	who := a_person
	tool := a_write
	now := sunday_10
	count(data.colonnade.decision.deny) == 0 with input.principal as who with input.tool as tool with input.time as now
}

test_hours_come_from_the_settings if {
	who := an_agent
	tool := a_write
	now := tuesday_20
	hours := {"start": 8, "end": 22}
	count(data.colonnade.decision.deny) == 0 with input.principal as who with input.tool as tool with input.time as now with data.colonnade.settings.business_hours as hours
}
