-- A filter a command may leave out (`perfcampaign history --metric`): true when `wanted` was not given (null)
-- or equals the value.
-- upstream: none
create or replace temp macro is_wanted(value, wanted) as wanted is null or value = wanted;
