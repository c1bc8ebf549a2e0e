# Written by `olmpack bundle init --dockerfile` from metadata/annotations.yaml: every annotation is
# repeated as a LABEL, so `docker build -f bundle.Dockerfile .` run in this folder gives the same
# image content as `olmpack bundle build`. Re-run init after editing the annotations.
FROM scratch

{{labels}}

{{copies}}
