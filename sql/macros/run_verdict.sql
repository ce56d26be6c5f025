-- A run's verdict in words, one rule for `runs`, `show`, the report header and the JUnit file: a run that
-- failed or was cancelled, or whose data failed a critical expectation, is never a pass, whatever its
-- requirements say; then FAIL (a requirement broken), pass, or not judged. The queries hand it the run's
-- status, its last validation's success and its whole-run verdicts (a macro cannot name tables that a
-- new warehouse does not have yet).
-- upstream: none
create or replace temp macro run_verdict(status, validated_ok, judged, all_hold) as
    case
        when status = 'failed' then 'RUN FAILED'
        when status = 'cancelled' then 'RUN CANCELLED'
        when validated_ok = false then 'DATA FAILED'
        when judged = 0 then 'not judged'
        when all_hold then 'pass'
        else 'FAIL'
    end;
