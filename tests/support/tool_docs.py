"""A small, hand-written tool catalog for router tests: three APIs of one tenant, as ToolDocs."""

from __future__ import annotations

from colonnade.routing.corpus import ToolCorpus
from colonnade.routing.documents import ToolDoc

__all__ = ["BILLING", "CRM", "NOTIFY", "sample_corpus", "sample_docs"]

CRM = "acme:crm"
BILLING = "acme:billing"
NOTIFY = "acme:notify"

_TOOLS: list[tuple[str, str, str, tuple[str, ...]]] = [
    (CRM, "search_customers", "Search customers by name, email address or company", ("crm", "customers")),
    (CRM, "get_customer", "Get one customer record by customer id", ("crm", "customers")),
    (CRM, "create_customer", "Create a customer record with name and email address", ("crm", "customers")),
    (CRM, "update_customer", "Update the email address or phone of a customer record", ("crm", "customers")),
    (CRM, "delete_customer", "Delete a customer record permanently", ("crm", "customers")),
    (CRM, "merge_customers", "Merge two duplicate customer records into one", ("crm", "customers")),
    (BILLING, "create_invoice", "Create an invoice for a customer with line items", ("billing", "invoices")),
    (BILLING, "list_invoices", "List the invoices of a customer, newest first", ("billing", "invoices")),
    (BILLING, "refund_invoice", "Refund a paid invoice fully or partially", ("billing", "payments")),
    (BILLING, "void_invoice", "Void an unpaid invoice so it can no longer be paid", ("billing", "invoices")),
    (BILLING, "record_payment", "Record a payment received against an invoice", ("billing", "payments")),
    (NOTIFY, "send_email", "Send an email message to an address", ("notifications",)),
    (NOTIFY, "send_sms", "Send a text message to a phone number", ("notifications",)),
]


def sample_docs() -> list[ToolDoc]:
    return [
        ToolDoc(
            id=f"{api}:{name}",
            name=name,
            summary=summary,
            params=(("customer_id", "The customer's id"),) if "customer" in name else (),
            server=api,
            tags=tags,
        )
        for api, name, summary, tags in _TOOLS
    ]


def sample_corpus() -> ToolCorpus:
    return ToolCorpus.from_docs(sample_docs())
