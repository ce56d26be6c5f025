-- k6's own failure verdict for a request: its `expected_response` tag ('true'/'false', from
-- http.setResponseCallback) when the point has one, else k6's default rule: a status outside 200-399.
-- upstream: none
create or replace temp macro k6_is_error(expected_response, status_code) as
    case expected_response
        when 'false' then true
        when 'true' then false
        else status_code not between 200 and 399
    end;
