-- One limit for every check of the admin token, whichever door it came through (the REST admin
-- API, the dashboard's sign-in): the dashboard's table of failed sign-ins becomes the table of
-- failed admin-token checks, its rows still counting. The index on `at` serves the instance-wide
-- ceiling (failures from every address in the window) and the pruning of expired rows.
alter table dashboard_signin_failures rename to admin_token_failures;
alter index dashboard_signin_failures_address_at rename to admin_token_failures_address_at;
create index admin_token_failures_at on admin_token_failures (at);
