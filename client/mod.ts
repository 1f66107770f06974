// The feed consumer library (issue 6): see client/README or the project README.
export {};
