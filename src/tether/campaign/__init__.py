"""Campaigns: one upstream release rolled out across many repositories, local or remote, with
one durable record per repository so an interrupted run continues where it stopped
(docs/campaigns.md)."""
