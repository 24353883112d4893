"""The agents, their tools and their projects (project ids derived from the seed)."""

from __future__ import annotations

from dataclasses import dataclass

from evalmock.world.hashing import stable_hash, uuid_from

# The reference page's own curl uses agent `example` with this project, so it always exists.
EXAMPLE_AGENT = "example"
EXAMPLE_PROJECT = "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0"


@dataclass(frozen=True)
class Tool:
    """A tool an agent can call, with the argument fields a case may pin."""

    name: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Agent:
    id: str
    tools: tuple[Tool, ...]
    fixed_projects: tuple[str, ...] = ()
    # Projects it serves beside its own, which another agent serves too (the page's list is "the
    # agent's set, narrowed to that project's cases": one project id, a list for each agent).
    shared_projects: tuple[str, ...] = ()


def _tools(*specs: str) -> tuple[Tool, ...]:
    """`"name(a, b)"` -> Tool("name", ("a", "b"))."""
    tools = []
    for spec in specs:
        name, _, rest = spec.partition("(")
        tools.append(
            Tool(name, tuple(arg.strip() for arg in rest.rstrip(")").split(",") if arg.strip()))
        )
    return tuple(tools)


AGENTS: tuple[Agent, ...] = (
    Agent(
        "acme.drafting",
        _tools(
            "search_contracts(jurisdiction, query, counterparty)",
            "fetch_clause(contract_id, clause)",
            "draft_document(template, language, counterparty)",
            "lookup_counterparty(counterparty, jurisdiction)",
            "send_email(to, subject)",
            "request_signature(contract_id, to)",
        ),
        shared_projects=(EXAMPLE_PROJECT,),
    ),
    Agent(
        "acme.support.triage",
        _tools(
            "fetch_ticket(ticket_id)",
            "search_kb(query, language)",
            "assign_ticket(ticket_id, team)",
            "escalate_ticket(ticket_id, priority)",
            "send_reply(ticket_id, language)",
            "fetch_invoice(invoice_id, customer_id)",
        ),
    ),
    Agent(
        "globex.search",
        _tools(
            "search_index(query, limit, language)",
            "fetch_document(document_id)",
            "rank_results(query, limit)",
            "lookup_synonyms(query, language)",
            "log_feedback(document_id, status)",
        ),
    ),
    Agent(
        "initech.billing",
        _tools(
            "fetch_invoice(invoice_id, customer_id)",
            "issue_refund(invoice_id, amount, currency)",
            "lookup_customer(customer_id)",
            "apply_credit(customer_id, amount, currency)",
            "send_email(to, subject)",
            "list_payments(customer_id, since, status)",
        ),
    ),
    Agent(
        EXAMPLE_AGENT,
        _tools(
            "search_contracts(jurisdiction, query)",
            "fetch_invoice(invoice_id, customer_id)",
            "send_email(to, subject)",
            "create_ticket(customer_id, priority, subject)",
            "lookup_customer(customer_id)",
        ),
        fixed_projects=(EXAMPLE_PROJECT,),
    ),
)
AGENTS_BY_ID: dict[str, Agent] = {agent.id: agent for agent in AGENTS}


def project_ids(seed: int, agent: Agent) -> tuple[str, ...]:
    """2 or 3 lower-case project UUIDs of the agent's own (its fixed ones first, then ones derived
    from the seed), then those it shares with another agent."""
    count = 2 + stable_hash(seed, "project-count", agent.id) % 2
    derived = (
        uuid_from(seed, "project", agent.id, number)
        for number in range(count - len(agent.fixed_projects))
    )
    return (*agent.fixed_projects, *derived, *agent.shared_projects)
