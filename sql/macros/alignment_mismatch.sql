-- How badly a server's per-second request series and the client's, shifted by one candidate skew, disagree
-- (clock_skew.sql): the total variation distance between the two as shares, plus the share of the
-- server's requests the client did not send in the compared span. 0 = identical. An aggregate over the
-- compared seconds of one candidate; client_total, client_in_span and server_total are that candidate's.
-- upstream: none
create or replace temp macro alignment_mismatch(server_share, client_requests, client_total, client_in_span,
                                                server_total) as
    0.5 * sum(abs(server_share - client_requests / client_total))
    + greatest(0, 1 - any_value(client_in_span) / any_value(server_total));
