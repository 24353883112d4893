"""Record and replay: what a service answered (a HAR file, or traffic through the proxy) made into a
data file that `evalmock serve --data` serves with the API's filters, cursors and versions."""
