"""Hand-built WARC/WET records for the input tests (WARC/1.0 framing, as Common Crawl writes it)."""


def warc_record(rtype, rid, uri, block):
    """One WARC record of type `rtype` (response, conversion, warcinfo, request) around `block`."""
    head = (f"WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Record-ID: {rid}\r\n"
            f"WARC-Date: 2024-03-01T10:00:00Z\r\nWARC-Target-URI: {uri}\r\n"
            f"Content-Length: {len(block)}\r\n\r\n").encode()
    return head + block + b"\r\n\r\n"


def http_page(html_body):
    """An HTTP response block with an HTML page whose body is `html_body`."""
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + \
        f"<html><body>{html_body}</body></html>".encode()
