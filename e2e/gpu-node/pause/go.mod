module nebius-dra/e2e/gpu-node/pause

go 1.26
