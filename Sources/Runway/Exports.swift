// `import Runway` brings the pipeline's types too: an app imports one module.
@_exported import RunwayCore
