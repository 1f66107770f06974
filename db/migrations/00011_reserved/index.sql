-- Reserved: another branch adds its migration under this number (the lead renumbers on merge).
select 1;
