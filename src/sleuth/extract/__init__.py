"""Reading pages: fetch a result's page through sleuth's own safety and extract its
main text (`sleuth extract`, `POST /v1/extract`, the MCP tool `extract_page`).

- `models`: the request and page contract;
- `document`: bytes to a page (HTML via `main_text` and `metadata`, PDF via `pdf`,
  charset via `charset`), pure;
- `fetch`, `robots`, `cassette`: getting the bytes (egress rules, size cap, deadline,
  robots.txt, record and replay);
- `reader`: one page end to end: cache, per-host limit, screening and sanitising.
"""
